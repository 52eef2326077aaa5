/**
 * Lodges one built application, once whatever happens: each step is committed to the ledger
 * before the next request, and a re-run starts after the last step recorded. The message id is
 * a UUIDv5 of the legacy key and every request after the process's creation is idempotent on
 * the platform (PUT message, PUT attachment, PUT send), so repeating the step a kill interrupted
 * lodges nothing twice. The one request that is not idempotent, POST process, is preceded by a
 * `process-requested` step: a kill between the two can leave one empty process (no message) on
 * the platform, and the ledger says so.
 */
import pLimit from 'p-limit';
import type { StagecoachClient } from '../../client/index.js';
import type { Party } from '../../client/lodge-folder.js';
import { APPLICATION_STEPS, type ApplicationLedger, type ApplicationRow, type ApplicationStep } from '../../ledger/application-steps.js';
import type { BuiltApplication } from './build-xml.js';

export interface LodgeContext {
  pipeline: string;
  scope: string;
  origin: string;
  definition: { referenceId: string; code: string };
  broker: Party;
  inFlight: number;
  signal?: AbortSignal | undefined;
}

const reached = (row: ApplicationRow | undefined, step: ApplicationStep) =>
  row !== undefined && row.step !== 'refused' && APPLICATION_STEPS.indexOf(row.step) >= APPLICATION_STEPS.indexOf(step);

/**
 * @example const row = await lodgeApplication(client, ledger, built, { file, line }, ctx); row.step // 'sent'
 */
export async function lodgeApplication(
  client: StagecoachClient,
  ledger: ApplicationLedger,
  app: Extract<BuiltApplication, { kind: 'built' }>,
  at: { file: string; line: number },
  ctx: LodgeContext,
): Promise<ApplicationRow> {
  const sig = ctx.signal ? { signal: ctx.signal } : {};
  let row = ledger.get(ctx.pipeline, ctx.scope, app.key);
  if (reached(row, 'sent')) return row!;
  const base = { pipeline: ctx.pipeline, scope: ctx.scope, legacyKey: app.key, messageId: app.messageId, file: at.file, line: at.line };
  const step = (s: ApplicationStep, processId: string | null, detail: string | null = null) => {
    row = { ...base, step: s, processId, detail };
    ledger.record(row);
  };
  let processId = row?.processId ?? null;
  if (!processId) {
    const earlier =
      row?.step === 'process-requested'
        ? JSON.stringify({ note: 'an earlier attempt stopped after asking for a process: that process, if it was made, holds no message' })
        : null;
    step('process-requested', null, earlier);
    const created = await client.processes.create(
      { processDefinitionReferenceId: ctx.definition.referenceId, externalReferences: [{ origin: ctx.origin, referenceId: app.key }] },
      sig,
    );
    processId = created.referenceId;
    step('process-created', processId);
  }
  if (!reached(row, 'message-created')) {
    await client.lodging.createMessage(
      processId,
      app.messageId,
      { messageType: ctx.definition.code, stakeholder: ctx.broker, recipient: ctx.broker, sender: ctx.broker },
      sig,
    );
    step('message-created', processId);
  }
  if (!reached(row, 'uploaded')) {
    const limit = pLimit(ctx.inFlight);
    await Promise.all(
      app.attachments.map((a) =>
        limit(() => client.lodging.uploadAttachment(processId!, app.messageId, a.fileName, a.bytes, 'application/xml', sig)),
      ),
    );
    step('uploaded', processId);
  }
  await client.lodging.send(processId, app.messageId, sig);
  step('sent', processId);
  return row!;
}
