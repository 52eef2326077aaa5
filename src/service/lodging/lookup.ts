/**
 * Finding the process and message a lodging route addresses: the process must belong to the
 * token's tenant and white label (else 404, like a missing one), the client-chosen message id
 * must be a UUID (else 400).
 */
import type { FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { HttpProblem } from '../http/problem.js';
import { findOwnedProcess, type ProcessRow } from '../process/store-processes.js';
import { findMessage, type MessageRow } from './store-messages.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface MessageParams {
  processId: string;
  messageId: string;
}

/** The owned process and the (lower-cased) message id of the path. */
export function addressedProcess(ctx: ServiceContext, request: FastifyRequest): { process: ProcessRow; messageId: string } {
  const { processId, messageId } = request.params as MessageParams;
  if (!UUID.test(messageId)) {
    throw new HttpProblem(
      400,
      'INVALID_REQUEST',
      `message reference id ${JSON.stringify(messageId)} is not a UUID; the client chooses a UUID per message`,
      {
        errors: [{ field: 'message-reference-id', message: 'INVALID_FIELD_VALUE' }],
      },
    );
  }
  const process = UUID.test(processId) ? findOwnedProcess(ctx.db, request.principal, processId.toLowerCase()) : undefined;
  if (!process) throw new HttpProblem(404, 'NOT_FOUND', `process ${processId} was not found`);
  return { process, messageId: messageId.toLowerCase() };
}

/** The owned process and an existing message of it (404 when there is none). */
export function addressedMessage(ctx: ServiceContext, request: FastifyRequest): { process: ProcessRow; message: MessageRow } {
  const { process, messageId } = addressedProcess(ctx, request);
  const message = findMessage(ctx.db, process.reference_id, messageId);
  if (!message)
    throw new HttpProblem(
      404,
      'NOT_FOUND',
      `message ${messageId} of process ${process.reference_id} was not found; create it with PUT first`,
    );
  return { process, message };
}
