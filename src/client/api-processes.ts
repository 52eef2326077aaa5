/** client.processes (process orchestration) and client.lodging (messages and attachments). */
import { z } from 'zod';
import { createdProcessSchema, messageSchema, type CreateMessage, type Message, type ProcessDefinition } from '../contract/process.js';
import type { ExternalReference } from '../contract/shared.js';
import { ClientError } from './errors.js';
import { parseWith, readDefinitions } from './tolerant.js';
import { FormData, seg, type Transport } from './transport.js';

type Signal = { signal?: AbortSignal };

/** A process as GET /process-orchestration/processes/{id} shows it (ours; tolerant). */
export const processRecordSchema = z.looseObject({ referenceId: z.string() });
export type ProcessRecord = z.infer<typeof processRecordSchema>;

export function processesApi(transport: Transport) {
  return {
    /**
     * Process definitions, filtered by type and code (always an array, whatever the service sent).
     * @example const [def] = await client.processes.definitions({ types: ['LoanOrigination'], codes: ['CleanOrder'] });
     */
    async definitions(filter: { types?: string[]; codes?: string[] } & Signal = {}): Promise<ProcessDefinition[]> {
      const res = await transport.json<unknown>({
        method: 'GET',
        path: '/process-orchestration/process-definitions',
        query: {
          types: filter.types?.length ? filter.types.join(',') : undefined,
          codes: filter.codes?.length ? filter.codes.join(',') : undefined,
        },
        area: 'process-orchestration',
        signal: filter.signal,
      });
      return readDefinitions(res.body);
    },
    /**
     * Starts a process for a definition (POST: never retried once it may have reached the service).
     * @example const { referenceId } = await client.processes.create({ processDefinitionReferenceId: def.referenceId, externalReferences: [{ origin: 'crm', referenceId: '42' }] });
     */
    async create(
      body: { processDefinitionReferenceId: string; externalReferences?: ExternalReference[] },
      opts: Signal = {},
    ): Promise<{ referenceId: string }> {
      const res = await transport.json<unknown>({
        method: 'POST',
        path: '/process-orchestration/processes',
        area: 'process-orchestration',
        body: JSON.stringify({
          processDefinitionReferenceId: body.processDefinitionReferenceId,
          externalReferences: body.externalReferences ?? [],
        }),
        contentType: 'application/json',
        signal: opts.signal,
      });
      return parseWith(createdProcessSchema.loose(), res.body, 'created process');
    },
    /** One process (an endpoint of the embedded service; not in the spec). */
    async get(processId: string, opts: Signal = {}): Promise<ProcessRecord> {
      const res = await transport.json<unknown>({
        method: 'GET',
        path: `/process-orchestration/processes/${seg(processId)}`,
        area: 'process-orchestration',
        signal: opts.signal,
      });
      return parseWith(processRecordSchema, res.body, 'process');
    },
  };
}

export function lodgingApi(transport: Transport) {
  const messagePath = (processId: string, messageId: string) => `/lodging/processes/${seg(processId)}/messages/${seg(messageId)}`;
  const api = {
    /**
     * Creates the draft message (PUT with a client-chosen id: safe to retry).
     * @example await client.lodging.createMessage(processId, randomUUID(), { messageType: 'CleanOrder', stakeholder, recipient, sender });
     */
    async createMessage(processId: string, messageId: string, body: CreateMessage, opts: Signal = {}): Promise<Message> {
      const res = await transport.json<unknown>({
        method: 'PUT',
        path: messagePath(processId, messageId),
        area: 'lodging',
        body: JSON.stringify(body),
        contentType: 'application/json',
        signal: opts.signal,
      });
      return parseWith(messageSchema, res.body, 'message');
    },
    /**
     * Uploads one attachment as multipart/form-data (`content` file + `mimeType` field).
     * @example await client.lodging.uploadAttachment(pid, mid, 'CleanOrderFinancingRequest.xml', xmlBytes, 'application/xml');
     */
    async uploadAttachment(
      processId: string,
      messageId: string,
      fileName: string,
      content: Uint8Array | string,
      mimeType: string,
      opts: Signal = {},
    ): Promise<void> {
      const bytes = typeof content === 'string' ? Buffer.from(content) : content;
      const form = new FormData();
      form.append('mimeType', mimeType);
      form.append('content', new Blob([bytes], { type: mimeType }), fileName);
      await transport.text({
        method: 'PUT',
        path: `${messagePath(processId, messageId)}/attachments/${seg(fileName)}`,
        area: 'lodging',
        body: form,
        signal: opts.signal,
      });
    },
    /**
     * Dispatches the message (PUT …/send with an empty JSON body); the service starts processing.
     * @example const sent = await client.lodging.send(pid, mid); sent.status // 'Sent'
     */
    async send(processId: string, messageId: string, opts: Signal = {}): Promise<Message> {
      try {
        const res = await transport.json<unknown>({
          method: 'PUT',
          path: `${messagePath(processId, messageId)}/send`,
          area: 'lodging',
          contentType: 'application/json',
          signal: opts.signal,
        });
        return parseWith(messageSchema, res.body, 'sent message');
      } catch (err) {
        // A platform that refuses a second send with 409 (ours answers 200 with the message,
        // docs/contract-gaps.md), after an earlier attempt or an earlier run got through: the
        // message is Sent, which is what was asked. Any other 409 leaves it a Draft: thrown.
        if (err instanceof ClientError && err.status === 409) {
          const message = await api.getMessage(processId, messageId, opts).catch(() => undefined);
          if (message?.status === 'Sent') return message;
        }
        throw err;
      }
    },
    /** One message with its attachments (an endpoint of the embedded service; not in the spec). */
    async getMessage(processId: string, messageId: string, opts: Signal = {}): Promise<Message> {
      const res = await transport.json<unknown>({
        method: 'GET',
        path: messagePath(processId, messageId),
        area: 'lodging',
        signal: opts.signal,
      });
      return parseWith(messageSchema, res.body, 'message');
    },
  };
  return api;
}
