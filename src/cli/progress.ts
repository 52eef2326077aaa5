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
  const logger = commandLogger('run', options.level, tty);
  const line = progressLine(stream);
  const every = (options.logEverySeconds ?? 5) * 1000;
  let lastLog = 0;
  return {
    logger,
    onProgress(p) {
      if (tty) {
        line.update(formatProgress(options.label, p));
        return;
      }
      const now = Date.now();
      if (!p.done && now - lastLog < every) return;
      lastLog = now;
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
