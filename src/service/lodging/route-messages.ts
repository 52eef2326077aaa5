/**
 * PUT /lodging/processes/{pid}/messages/{mid}: creates a Draft message (201). Repeating the
 * same PUT is idempotent (200 with the message as it is now); a PUT with a different body for
 * an existing message is 409 MESSAGE_ALREADY_EXISTS. The messageType must be the code of the
 * process's definition (422 MESSAGE_TYPE_MISMATCH).
 * GET of the same path (not in the spec): the whole message with its handling outcome.
 */
import type { FastifyInstance } from 'fastify';
import { createMessageSchema } from '../../contract/process.js';
import type { ServiceContext } from '../context.js';
import { HttpProblem } from '../http/problem.js';
import { findDefinition } from '../process/definitions.js';
import { parseBody } from '../process/parse-body.js';
import { addressedMessage, addressedProcess } from './lookup.js';
import { findMessage, insertMessage, renderCreated, renderMessageDetail } from './store-messages.js';

export const MESSAGE_PATH = '/lodging/processes/:processId/messages/:messageId';

export async function messagesRoute(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  const config = { area: 'lodging' } as const;

  app.put(MESSAGE_PATH, { config }, async (request, reply) => {
    const { process, messageId } = addressedProcess(ctx, request);
    const body = parseBody(createMessageSchema, request.body, 'message body');
    const definition = findDefinition(ctx.db, process.definition_id);
    if (definition && body.messageType !== definition.code) {
      throw new HttpProblem(
        422,
        'MESSAGE_TYPE_MISMATCH',
        `messageType ${JSON.stringify(body.messageType)} is not the message type of this process; its definition ${definition.code} takes messageType ${JSON.stringify(definition.code)}`,
        {
          errors: [{ field: 'messageType', message: 'MESSAGE_TYPE_MISMATCH' }],
        },
      );
    }
    const outcome = ctx.db.transaction(() => {
      const existing = findMessage(ctx.db, process.reference_id, messageId);
      if (!existing) return { created: true, row: insertMessage(ctx.db, process.reference_id, messageId, body) };
      const differing = (['messageType', 'stakeholder', 'recipient', 'sender'] as const).filter((field) => {
        const stored = field === 'messageType' ? existing.message_type : (JSON.parse(existing[field]) as unknown);
        return JSON.stringify(stored) !== JSON.stringify(body[field]);
      });
      if (differing.length > 0) {
        throw new HttpProblem(
          409,
          'MESSAGE_ALREADY_EXISTS',
          `message ${messageId} already exists with other ${differing.join(', ')}; choose a new message id for a new message`,
          {
            errors: differing.map((field) => ({ field, message: 'MESSAGE_ALREADY_EXISTS' })),
          },
        );
      }
      return { created: false, row: existing };
    })();
    if (outcome.created) reply.code(201).header('location', `/lodging/processes/${process.reference_id}/messages/${messageId}`);
    return renderCreated(outcome.row);
  });

  app.get(MESSAGE_PATH, { config }, async (request) => {
    const { message } = addressedMessage(ctx, request);
    return renderMessageDetail(ctx.db, message);
  });
}
