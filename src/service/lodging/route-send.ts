/**
 * PUT /lodging/processes/{pid}/messages/{mid}/send: dispatches a Draft message. Without both
 * required attachments it is 409 REQUIRED_ATTACHMENTS_MISSING naming them, and nothing changes.
 * Otherwise, in one transaction, the message becomes Sent (handling Pending) and the process
 * moves to ApplicationReceived; the handling then runs in the background. Sending a message
 * that is already Sent answers 200 with it again (a retried send is harmless).
 */
import type { FastifyInstance } from 'fastify';
import { REQUIRED_ATTACHMENTS } from '../../contract/process.js';
import type { ServiceContext } from '../context.js';
import { HttpProblem } from '../http/problem.js';
import { moveProcessStatus, PROCESS_STATUS } from '../process/store-processes.js';
import { scheduleHandling } from './handling.js';
import { addressedMessage } from './lookup.js';
import { MESSAGE_PATH } from './route-messages.js';
import { attachmentExists, findMessage, markSent, renderMessage } from './store-messages.js';

export async function sendRoute(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  app.put(`${MESSAGE_PATH}/send`, { config: { area: 'lodging' } }, async (request) => {
    const { process, message } = addressedMessage(ctx, request);
    const { reference_id: messageId, process_id: processId } = message;
    const sentNow = ctx.db.transaction(() => {
      const current = findMessage(ctx.db, processId, messageId)!;
      if (current.status === 'Sent') return false;
      const missing = REQUIRED_ATTACHMENTS.filter((name) => !attachmentExists(ctx.db, processId, messageId, name));
      if (missing.length > 0) {
        throw new HttpProblem(
          409,
          'REQUIRED_ATTACHMENTS_MISSING',
          `message ${messageId} cannot be sent: required attachment${missing.length > 1 ? 's' : ''} ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} missing; upload ${missing.length > 1 ? 'them' : 'it'} first`,
          {
            errors: missing.map((name) => ({ field: name, message: 'REQUIRED_ATTACHMENTS_MISSING' })),
          },
        );
      }
      markSent(ctx.db, processId, messageId);
      moveProcessStatus(ctx.db, process, PROCESS_STATUS.received, { messageReferenceId: messageId, reason: `message ${messageId} sent` });
      return true;
    })();
    if (sentNow) scheduleHandling(ctx, processId, messageId);
    return renderMessage(ctx.db, findMessage(ctx.db, processId, messageId)!);
  });
}
