/**
 * Progress of a pipeline run for people and for machines. On a terminal: one line on stderr,
 * redrawn in place (rows, rows/s, staged, unchanged, rejected, refused, uploads in flight, ETA).
 * Otherwise: pino JSON lines on stderr — the run's own log entries, plus a `progress` entry
 * every few seconds — so CI logs and log shippers get structured data, never control codes.
 */
import pino, { type Logger } from 'pino';
import type { RunProgress } from '../pipeline/runner/index.js';
import { progressLine } from './output.js';

export interface RunDisplay {
  /** The logger the run writes to (quiet on a terminal, where the line shows progress). */
  logger: Logger;
  onProgress(progress: RunProgress): void;
  /** Prints a notice on its own line (e.g. "stopping…"), keeping the progress line intact. */
  notice(text: string): void;
  /** Clears the line; call before printing the report. */
  done(): void;
}

export interface RunDisplayOptions {
  stream?: NodeJS.WriteStream;
  /** pino level; default `warn` on a terminal, `info` otherwise. */
  level?: string;
  /** Seconds between `progress` log entries when not on a terminal (default 5). */
  logEverySeconds?: number;
  /** Name shown at the start of the line. */
  label: string;
  /** The `command` of the log lines (default `run`). */
  command?: string;
}

/**
 * @example
 *   const display = runDisplay({ label: 'crm' });
 *   const report = await runPipeline({ …, logger: display.logger, onProgress: display.onProgress });
 *   display.done();
 */
export function runDisplay(options: RunDisplayOptions): RunDisplay {
  const stream = options.stream ?? process.stderr;
  const tty = stream.isTTY === true;
  const logger = commandLogger(options.command ?? 'run', options.level, tty);
  const line = progressLine(stream);
  const due = logDue(options.logEverySeconds);
  return {
    logger,
    onProgress(p) {
      if (tty) {
        line.update(formatProgress(options.label, p));
        return;
      }
      if (!due(p.done)) return;
      logger.info(
        {
          rowsRead: p.rowsRead,
          mapped: p.mapped,
          rejected: p.rejected,
          skippedUnchanged: p.skippedUnchanged,
          sent: p.sent,
          staged: p.staged,
          failed: p.failed,
          batchesInFlight: p.batchesInFlight,
          rowsPerSecond: p.rowsPerSecond,
          ...(p.fraction !== undefined ? { percent: Math.round(p.fraction * 1000) / 10 } : {}),
          ...(p.etaMs !== undefined ? { etaSeconds: Math.round(p.etaMs / 1000) } : {}),
        },
        'progress',
      );
    },
    notice(text) {
      if (tty) {
        line.done();
        stream.write(`${text}\n`);
      } else logger.warn(text);
    },
    done() {
      line.done();
    },
  };
}

/**
 * When a progress line is due in a log (not on a terminal): every few seconds, and at the end.
 * The first comes at once or, with `firstAfterInterval`, after the interval (so a step of a
 * second logs only its end).
 */
export function logDue(everySeconds = 5, firstAfterInterval = false, now: () => number = Date.now): (final: boolean) => boolean {
  const every = everySeconds * 1000;
  let last = firstAfterInterval ? now() : Number.NEGATIVE_INFINITY;
  return (final) => {
    const t = now();
    if (!final && t - last < every) return false;
    last = t;
    return true;
  };
}

export interface StepDisplay {
  /** `done` of `of` (when known) so far; `fraction` (0..1) when the share done is known otherwise (bytes read). */
  update(done: number, of?: number, fraction?: number): void;
  /** The step is over: the last log line (not on a terminal), the line cleared (on one). */
  done(): void;
}

/**
 * Progress of one long step that is not a pipeline run (deletes from staging, `plan`, `init`):
 * `removing invalid records from staging  1,200 of 5,000  150/s  24%  ETA 0:25` on a terminal,
 * redrawn in place; otherwise a pino `progress` line every few seconds and one at the end.
 * @example
 *   const step = stepDisplay({ label: 'plan', unit: 'rows' });
 *   for (…) step.update(rows, total);
 *   step.done();
 */
export function stepDisplay(options: {
  label: string;
  unit: string;
  stream?: NodeJS.WriteStream;
  logger?: Logger;
  logEverySeconds?: number;
  /** Not on a terminal: no `step done` line for a step that ended before its first `progress` line. */
  quietWhenShort?: boolean;
}): StepDisplay {
  const stream = options.stream ?? process.stderr;
  const tty = stream.isTTY === true;
  const line = progressLine(stream);
  const logger = options.logger ?? (tty ? undefined : commandLogger(options.label.split(/[ :]/)[0]!, 'info', false));
  const due = logDue(options.logEverySeconds, true);
  const started = Date.now();
  let last: { done: number; of?: number | undefined; fraction?: number | undefined } | undefined;
  let logged = false;
  let finished = false;
  const show = (final: boolean) => {
    if (!last) return;
    const seconds = (Date.now() - started) / 1000;
    const perSecond = seconds > 0 ? Math.round(last.done / seconds) : 0;
    const fraction = last.fraction ?? (last.of ? Math.min(1, last.done / last.of) : undefined);
    const etaMs = fraction && fraction > 0.001 && fraction < 1 ? ((seconds * (1 - fraction)) / fraction) * 1000 : undefined;
    if (tty) {
      const parts = [
        `${options.label}  ${n(last.done)}${last.of !== undefined ? ` of ${n(last.of)}` : ''} ${options.unit}`,
        `${n(perSecond)}/s`,
      ];
      if (fraction !== undefined) parts.push(`${Math.floor(fraction * 100)}%`);
      if (etaMs !== undefined) parts.push(`ETA ${clock(etaMs)}`);
      line.update(parts.join('  '));
      return;
    }
    if (final && !logged && options.quietWhenShort) return;
    if (!due(final)) return;
    logged = true;
    logger?.info(
      {
        step: options.label,
        ...(fraction !== undefined ? { percent: Math.round(fraction * 1000) / 10 } : {}),
        done: last.done,
        ...(last.of !== undefined ? { of: last.of } : {}),
        unit: options.unit,
        perSecond,
        ...(etaMs !== undefined ? { etaSeconds: Math.round(etaMs / 1000) } : {}),
        seconds: Math.round(seconds),
      },
      final ? 'step done' : 'progress',
    );
  };
  return {
    update(done, of, fraction) {
      last = { done, of, fraction };
      show(false);
    },
    done() {
      if (finished) return;
      finished = true;
      show(true);
      line.done();
    },
  };
}

/**
 * The pino logger of a command, on stderr: `warn` on a terminal (where a progress line shows
 * what happens), `info` otherwise, or the level asked for. It never gets personal values: the
 * stages log counts, codes, file:line and legacy keys (docs/privacy.md).
 */
export function commandLogger(command: string, level?: string, tty = process.stderr.isTTY === true): Logger {
  return pino({ level: level ?? (tty ? 'warn' : 'info'), base: { command } }, pino.destination({ dest: 2, sync: true }));
}

const n = (v: number) => v.toLocaleString('en-US');

/** `crm  12,000 rows  8,100/s  staged 11,000 · unchanged 0 · rejected 3 · refused 0  in flight 4  43%  ETA 0:12` */
export function formatProgress(label: string, p: RunProgress): string {
  const parts = [
    `${label}  ${n(p.rowsRead)} rows  ${n(p.rowsPerSecond)}/s`,
    `staged ${n(p.staged)} · unchanged ${n(p.skippedUnchanged)} · rejected ${n(p.rejected)} · refused ${n(p.failed)}`,
    `in flight ${p.batchesInFlight}`,
  ];
  if (p.fraction !== undefined) parts.push(`${Math.floor(p.fraction * 100)}%`);
  if (p.etaMs !== undefined) parts.push(`ETA ${clock(p.etaMs)}`);
  return parts.join('  ');
}

/** `0:35`, `12:04`, `1:02:03` */
export function clock(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}
