/** Process orchestration and lodging resources. */
import { z } from 'zod';
import { externalReferenceSchema, uuid } from './shared.js';

export const processDefinitionSchema = z.object({
  referenceId: uuid,
  type: z.string(),
  code: z.string(),
  name: z.record(z.string(), z.string()),
  isActive: z.boolean(),
  statuses: z.array(z.object({ referenceId: uuid, code: z.string(), name: z.string(), isActive: z.boolean() })),
  updatedOn: z.string(),
});
export type ProcessDefinition = z.infer<typeof processDefinitionSchema>;

export const createProcessSchema = z.object({
  processDefinitionReferenceId: uuid,
  externalReferences: z.array(externalReferenceSchema).default([]),
});
export type CreateProcess = z.infer<typeof createProcessSchema>;
export const createdProcessSchema = z.object({ referenceId: uuid });

export const partySchema = z.object({ id: z.string().min(1), type: z.string().min(1) });
export const createMessageSchema = z.object({
  messageType: z.string().min(1),
  stakeholder: partySchema,
  recipient: partySchema,
  sender: partySchema,
});
export type CreateMessage = z.infer<typeof createMessageSchema>;

export const attachmentSchema = z.object({
  fileName: z.string(),
  mimeType: z.string(),
  size: z.number().int(),
  createdOn: z.string(),
  updatedOn: z.string(),
});
export const messageSchema = z.looseObject({
  referenceId: uuid,
  messageType: z.string(),
  status: z.enum(['Draft', 'Sent']),
  createdOn: z.string(),
  sentOn: z.string().nullable().optional(),
  stakeholder: partySchema.optional(),
  recipient: partySchema.optional(),
  sender: partySchema.optional(),
  updatedOn: z.string().optional(),
  attachments: z.array(attachmentSchema).optional(),
});
export type Message = z.infer<typeof messageSchema>;

/** The seven well-known attachment names; the first two are required to send. */
export const WELL_KNOWN_ATTACHMENTS = [
  'CleanOrderFinancingRequest.xml',
  'CleanOrderCounterparties.xml',
  'CleanOrderCollaterals.xml',
  'CleanOrderCovers.xml',
  'CleanOrderDeedPassing.xml',
  'AnsweredQuestionnaire.xml',
  'DocumentManagementFileDocuments.xml',
] as const;
export const REQUIRED_ATTACHMENTS = ['CleanOrderFinancingRequest.xml', 'CleanOrderCounterparties.xml'] as const;
