/**
 * Background handling of sent messages. Sending commits the message as Sent with handling
 * Pending; handling then reads the attachments, and in ONE transaction makes the lodged
 * counterparties live, records the outcome on the message, emits
 * `lodging.message.handling_succeeded` or `…handling_failed`, and moves the process (InReview or
 * HandlingFailed). A crash before that commit leaves the message Pending, and registration
 * resumes every Pending handling, so a sent message is always handled exactly once in effect.
 */
import { WELL_KNOWN_ATTACHMENTS } from '../../contract/process.js';
import type { ServiceContext } from '../context.js';
import type { Db } from '../store/database.js';
import { emitEvent } from '../events/outbox.js';
import { upsertLiveCounterparties } from '../counterparties/store.js';
import { findProcess, moveProcessStatus, PROCESS_STATUS } from '../process/store-processes.js';
import { attachmentContent, findMessage, listAttachments, markHandled, pendingHandlings, type HandlingError } from './store-messages.js';
import { readApplication } from './read-application.js';

/**
 * Runs the handling of one sent message in the background (after the current transaction).
 * @example scheduleHandling(ctx, processId, messageId);
 */
export function scheduleHandling(ctx: ServiceContext, processId: string, messageId: string): void {
  ctx.background.run(async (signal) => {
    // Let the send response go out first; handling is CPU work of a few milliseconds.
    await new Promise((resolve) => setImmediate(resolve));
    if (signal.aborted) return; // stays Pending: resumed at the next start
    try {
      const outcome = handleMessage(ctx.db, processId, messageId);
      ctx.logger.info({ processId, messageId, outcome }, 'lodged message handled');
    } catch (err) {
      ctx.logger.error(
        { err, processId, messageId },
        'handling a lodged message failed unexpectedly; it stays Pending and is retried at the next start',
      );
    }
  });
}

/** Schedules every message that was sent but not handled (at registration). */
export function resumePendingHandlings(ctx: ServiceContext): number {
  const pending = pendingHandlings(ctx.db);
  for (const p of pending) scheduleHandling(ctx, p.process_id, p.reference_id);
  if (pending.length) ctx.logger.info({ count: pending.length }, 'resuming handling of sent messages');
  return pending.length;
}

/**
 * Handles one Pending message synchronously; returns the outcome, or 'skipped' when the message
 * is not (or no longer) Pending.
 */
export function handleMessage(db: Db, processId: string, messageId: string): 'Succeeded' | 'Failed' | 'skipped' {
  const message = findMessage(db, processId, messageId);
  const process = findProcess(db, processId);
  if (!message || !process || message.handling_status !== 'Pending') return 'skipped';

  const attachments = listAttachments(db, processId, messageId);
  const files = new Map<string, Buffer>();
  for (const name of WELL_KNOWN_ATTACHMENTS) {
    const bytes = attachmentContent(db, processId, messageId, name);
    if (bytes) files.set(name, bytes);
  }
  let reading: ReturnType<typeof readApplication>;
  try {
    reading = readApplication({ brokerKey: process.broker_key, processId, files, attachmentNames: attachments.map((a) => a.file_name) });
  } catch (err) {
    reading = {
      counterparties: [],
      errors: [
        { code: 'INTERNAL_ERROR', fileName: '', field: '', message: `the service could not read the message: ${(err as Error).message}` },
      ],
    };
  }

  const base = {
    processReferenceId: processId,
    messageReferenceId: messageId,
    messageType: message.message_type,
    status: message.status,
    attachments: attachments.map((a) => a.file_name),
  };
  return db.transaction(() => {
    // Another handler (a resumed one) may have finished in the meantime.
    if (findMessage(db, processId, messageId)?.handling_status !== 'Pending') return 'skipped' as const;
    if (reading.errors.length > 0) {
      const errors: HandlingError[] = reading.errors;
      const handledOn = markHandled(db, processId, messageId, 'Failed', { errors });
      emitEvent(db, {
        brokerKey: process.broker_key,
        label: process.label_id,
        eventName: 'lodging.message.handling_failed',
        data: { ...base, handlingStatus: 'Failed', handledOn, errors },
      });
      moveProcessStatus(db, process, PROCESS_STATUS.handlingFailed, {
        messageReferenceId: messageId,
        reason: `handling of message ${messageId} failed`,
      });
      return 'Failed' as const;
    }
    const result = upsertLiveCounterparties(db, process.broker_key, reading.counterparties, 'lodging');
    const counterpartyReferenceIds = reading.counterparties.map((c) => c.referenceId);
    const handledOn = markHandled(db, processId, messageId, 'Succeeded', { counterpartyReferenceIds, ...result });
    emitEvent(db, {
      brokerKey: process.broker_key,
      label: process.label_id,
      eventName: 'lodging.message.handling_succeeded',
      data: {
        ...base,
        handlingStatus: 'Succeeded',
        handledOn,
        counterparties: {
          referenceIds: counterpartyReferenceIds,
          inserted: result.inserted,
          updated: result.updated,
          merged: result.merged,
        },
      },
    });
    moveProcessStatus(db, process, PROCESS_STATUS.inReview, { messageReferenceId: messageId, reason: `message ${messageId} handled` });
    return 'Succeeded' as const;
  })();
}
