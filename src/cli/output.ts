/**
 * Printing helpers of the commands: `--json` output for scripts, aligned tables and key/value
 * blocks for people, and a progress line that only appears on a terminal. Everything goes
 * through one writer so tests and commands print the same way.
 */
import type { Command } from 'commander';
import pc from 'picocolors';

export interface Out {
  write(text: string): void;
}

/** Adds `--json` (machine-readable output on stdout) to a command. */
export function addJsonOption(command: Command): Command {
  return command.option('--json', 'print machine-readable JSON on stdout instead of text');
}

/**
 * Prints a value as pretty JSON followed by a newline.
 * @example printJson({ ok: true }) // {\n  "ok": true\n}
 */
export function printJson(value: unknown, out: Out = process.stdout): void {
  out.write(`${JSON.stringify(value, null, 2)}\n`);
}

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
  align?: 'left' | 'right';
  /** Longest cell shown; longer values are cut with an ellipsis (default 60). */
  max?: number;
}

/**
 * Prints rows as a plain aligned table (two spaces between columns, a header line).
 * @example printTable([{ a: 1 }], [{ header: 'A', value: (r) => r.a }])
 */
export function printTable<T>(rows: readonly T[], columns: readonly Column<T>[], out: Out = process.stdout): void {
  const cells = rows.map((row) => columns.map((c) => clip(formatCell(c.value(row)), c.max ?? 60)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (columns[i]!.align === 'right' ? v.padStart(widths[i]!) : i === values.length - 1 ? v : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  out.write(`${pc.bold(line(columns.map((c) => c.header)))}\n`);
  for (const r of cells) out.write(`${line(r)}\n`);
}

/**
 * Prints labelled values, labels aligned.
 * @example printFields([['status', 'Sent'], ['sent on', '2025-01-01T00:00:00Z']])
 */
export function printFields(pairs: ReadonlyArray<readonly [string, unknown]>, out: Out = process.stdout): void {
  const width = Math.max(0, ...pairs.map(([k]) => k.length));
  for (const [k, v] of pairs) out.write(`${pc.dim(k.padEnd(width))}  ${formatCell(v)}\n`);
}

/** A progress line on stderr, rewritten in place on a terminal and silent otherwise. */
export function progressLine(stream: NodeJS.WriteStream = process.stderr): { update(text: string): void; done(): void } {
  const tty = stream.isTTY === true;
  let last = 0;
  let shown = false;
  return {
    update(text) {
      if (!tty) return;
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      shown = true;
      stream.write(`\r\x1b[2K${text}`);
    },
    done() {
      if (tty && shown) stream.write('\r\x1b[2K');
    },
  };
}

function formatCell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(formatCell).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s*\n\s*/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** `--stage-undecided`, the same words on plan, run and migrate. */
export const STAGE_UNDECIDED_HELP =
  'stage the records without the fields their mapping marks undecided (default: stop before reading, naming each undecided field at its line; exit 2)';
