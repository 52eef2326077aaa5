/**
 * Runs an applications pipeline: every row of every source is built into CleanOrder
 * attachments (build-xml.ts) and checked before anything is sent; a refused row (unreadable,
 * mapping refusal, XSD violation, a second row with the same key) goes to the ledger and the
 * source's corrections file; a built one is lodged once (lodge-application.ts); then the
 * platform's handling of every sent message is read back until each has an outcome or the
 * timeout passes (polling: the webhook receiver is not wired in yet).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { StagecoachClient } from '../client/index.js';
import { pickDefinition } from '../client/lodge-folder.js';
import { ApplicationLedger, type ApplicationRow } from '../ledger/application-steps.js';
import type { Db } from '../ledger/schema.js';
import { maskValue } from '../privacy/mask.js';
import { type RefusedRecord, writeCorrections, type CorrectionsFile } from './corrections.js';
import { isSourceRowError, listSourceFiles, readSourceFile } from '../pipeline/source/index.js';
import type { RejectReason } from '../pipeline/types.js';
import { compileApplicationMapping } from '../pipeline/applications/build-xml.js';
import type { ApplicationsPipeline } from '../pipeline/applications/definition.js';
import { type EventWatch, watchApplicationEvents } from '../pipeline/applications/event-watch.js';
import { lodgeApplication, type LodgeContext } from '../pipeline/applications/lodge-application.js';
import type { ReceivedEvent } from '../client/webhook-receiver.js';

export interface ApplicationsReport {
  pipeline: string;
  read: number;
  refused: Array<{ at: string; key: string | undefined; reasons: Array<{ field: string; code: string; message: string }> }>;
  /** Sent by this run. */
  sent: number;
  /** Sent by an earlier run (found in the ledger, nothing requested again). */
  alreadySent: number;
  succeeded: number;
  failed: Array<{ key: string; errors: unknown }>;
  /** Sent, with no outcome when the timeout passed. */
  pending: string[];
  corrections: CorrectionsFile[];
}

export interface RunApplicationsOptions {
  /** Folder the corrections files are written to. */
  correctionsDir: string;
  signal?: AbortSignal;
  onProgress?: (text: string) => void;
}

/**
 * @example const report = await runApplications(def, client, db, { correctionsDir: '.stagecoach/corrections' });
 */
export async function runApplications(
  def: ApplicationsPipeline,
  client: StagecoachClient,
  db: Db,
  options: RunApplicationsOptions,
): Promise<ApplicationsReport> {
  const ledger = new ApplicationLedger(db);
  const definition = await pickDefinition(client, 'CleanOrder', options.signal);
  const report: ApplicationsReport = {
    pipeline: def.name,
    read: 0,
    refused: [],
    sent: 0,
    alreadySent: 0,
    succeeded: 0,
    failed: [],
    pending: [],
    corrections: [],
  };
  const refusedRows: RefusedRecord[] = [];
  const mine: ApplicationRow[] = [];
  // Subscribed before the first send, so no outcome is emitted before the receiver listens.
  const watch: EventWatch | undefined =
    def.lodging.events === 'webhook'
      ? await watchApplicationEvents(client, (e) => onEvent(ledger, def.name, e), options.signal)
      : undefined;
  try {
    for (const source of def.sources) {
      const builder = compileApplicationMapping(source.mappingFile.spec, source.mappingFile.display, def.target.referenceNamespace);
      const ctx: LodgeContext = {
        pipeline: def.name,
        scope: builder.scope,
        origin: builder.origin,
        definition: { referenceId: definition.referenceId, code: definition.code },
        broker: { id: client.options.brokerKey, type: 'broker' },
        inFlight: def.lodging.inFlight,
        signal: options.signal,
      };
      const seen = new Map<string, string>();
      for (const file of await listSourceFiles(def.dir, source)) {
        for await (const row of readSourceFile(source, file)) {
          report.read++;
          const at = `${row.provenance.file}:${row.provenance.line}`;
          const refuse = (key: string | undefined, reasons: RejectReason[]) => {
            report.refused.push({ at, key, reasons: reasons.map(({ field, code, message }) => ({ field, code, message })) });
            refusedRows.push({ source: source.name, provenance: row.provenance, errors: reasons.map((r) => ({ ...r, stage: 'mapping' })) });
            ledger.record({
              pipeline: def.name,
              scope: builder.scope,
              legacyKey: key ?? `(no key) ${at}`,
              step: 'refused',
              messageId: null,
              processId: null,
              file: row.provenance.file,
              line: row.provenance.line,
              detail: JSON.stringify(reasons),
            });
          };
          if (isSourceRowError(row)) {
            refuse(undefined, [{ field: '', code: row.code, message: row.message }]);
            continue;
          }
          const built = builder.build(row);
          const first = built.key === undefined ? undefined : seen.get(built.key);
          if (first !== undefined) {
            // The ledger's row stays the first one's: only this refusal's step is added, under a key of its own.
            refuse(`${built.key} (again at ${at})`, [
              {
                field: 'key',
                code: 'DUPLICATE_LEGACY_KEY',
                message: `${at}: application ${built.key} is already at ${first}; one application is lodged once`,
              },
            ]);
            continue;
          }
          if (built.key !== undefined) seen.set(built.key, at);
          if (built.kind === 'refused') {
            refuse(built.key, built.reasons);
            continue;
          }
          const before = ledger.get(def.name, builder.scope, built.key);
          const done = await lodgeApplication(client, ledger, built, { file: row.provenance.file, line: row.provenance.line }, ctx);
          if (before && ['sent', 'succeeded', 'failed'].includes(before.step)) report.alreadySent++;
          else report.sent++;
          mine.push(done);
          options.onProgress?.(`${built.key}: ${done.step}`);
        }
      }
    }
    report.corrections = refusedRows.length ? await writeCorrections(refusedRows, def.sources, options.correctionsDir, process.cwd()) : [];
    await awaitOutcomes(client, ledger, mine, def.lodging.outcomeTimeoutSeconds * 1000, report, options);
  } finally {
    const failures = (await watch?.close()) ?? [];
    for (const f of failures) options.onProgress?.(`could not remove the webhook subscription ${f}`);
  }
  return report;
}

/** An event about one of this pipeline's messages: its outcome, or a process status, into the ledger. */
function onEvent(ledger: ApplicationLedger, pipeline: string, e: ReceivedEvent): void {
  const data = (e.data ?? {}) as {
    messageReferenceId?: string;
    handlingStatus?: string;
    errors?: unknown;
    status?: string;
    reason?: string;
  };
  const row = data.messageReferenceId ? ledger.byMessage(pipeline, data.messageReferenceId) : undefined;
  if (!row) return; // another pipeline's, or another tool's
  if (e.eventName === 'process.status-changed') {
    ledger.note(row, `status:${data.status}`, JSON.stringify({ via: 'event', reason: data.reason ?? null }));
    return;
  }
  if (row.step !== 'sent' || (data.handlingStatus !== 'Succeeded' && data.handlingStatus !== 'Failed')) return;
  ledger.record({
    ...row,
    step: data.handlingStatus === 'Succeeded' ? 'succeeded' : 'failed',
    detail: data.handlingStatus === 'Failed' ? JSON.stringify(data.errors ?? []) : JSON.stringify({ via: 'event' }),
  });
}

/** Reads each sent message's handling until every one has an outcome or `timeoutMs` passes. */
async function awaitOutcomes(
  client: StagecoachClient,
  ledger: ApplicationLedger,
  rows: ApplicationRow[],
  timeoutMs: number,
  report: ApplicationsReport,
  options: RunApplicationsOptions,
): Promise<void> {
  const sig = options.signal ? { signal: options.signal } : {};
  const deadline = Date.now() + timeoutMs;
  let open = rows;
  for (;;) {
    const still: ApplicationRow[] = [];
    // read again each round: the event receiver may have recorded an outcome meanwhile
    for (const row of open.map((r) => ledger.get(r.pipeline, r.scope, r.legacyKey)!)) {
      if (row.step === 'succeeded' || row.step === 'failed') {
        count(row, report);
        continue;
      }
      const message = await client.lodging.getMessage(row.processId!, row.messageId!, sig);
      const handling = (message as { handling?: { status?: string; errors?: unknown } | null }).handling;
      if (handling?.status === 'Succeeded' || handling?.status === 'Failed') {
        const outcome: ApplicationRow = {
          ...row,
          step: handling.status === 'Succeeded' ? 'succeeded' : 'failed',
          detail: handling.status === 'Failed' ? JSON.stringify(handling.errors ?? []) : JSON.stringify({ via: 'poll' }),
        };
        ledger.record(outcome);
        count(outcome, report);
      } else still.push(row);
    }
    open = still;
    if (open.length === 0 || Date.now() >= deadline) break;
    options.onProgress?.(`waiting for the platform's handling of ${open.length} application${open.length === 1 ? '' : 's'}…`);
    await sleep(Math.min(250, Math.max(0, deadline - Date.now())), undefined, sig);
  }
  report.pending = open.map((r) => r.legacyKey);
}

function count(row: ApplicationRow, report: ApplicationsReport): void {
  if (row.step === 'succeeded') report.succeeded++;
  else report.failed.push({ key: row.legacyKey, errors: row.detail ? JSON.parse(row.detail) : [] });
}

/** A refusal's reason for a printout: the value libxml2 quotes is masked, like every personal value shown. */
export function maskedReason(message: string): string {
  return message.replace(/(The value |value of )'([^']*)'/g, (_m, lead: string, v: string) => `${lead}'${maskValue(v)}'`);
}
