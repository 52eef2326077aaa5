/**
 * Decides whether an existing `counterparties export --out` file may be continued, and from where.
 *
 * A file is continued only when it is a *cut-off export of the same format*: exactly what
 * `exportCounterparties` writes, possibly cut short by a crash inside its last record. Anything
 * else is refused with one line naming the file and the reason, and is never written to: the
 * whole file is read (streamed, memory bounded) before a single byte is cut, because a file that
 * only looks like an export at its end (or whose early line holds a quote that a CSV parser
 * chokes on) must not be truncated. The precise rules are in docs/cli.md.
 */
import { createReadStream, promises as fsp } from 'node:fs';
import { parse as parseCsv } from 'csv-parse';
import { createFrameDecoder, type Frame } from '../codec/index.js';
import { StagecoachError } from '../contract/errors.js';
import { readCounter } from '../contract/shared.js';

export type ExportFormat = 'jsonl' | 'json-seq' | 'csv';

/** CSV columns: flat fields of both counterparty types; nested arrays are in the JSON formats. */
export const CSV_COLUMNS = [
  'sequenceNumber',
  'referenceId',
  'type',
  'lifecycleStatus',
  'countryCode',
  'preferredCommunicationLanguage',
  'organisationName',
  'cocNumber',
  'countryOfIncorporation',
  'salutation',
  'initials',
  'firstName',
  'surnamePrefix',
  'surname',
  'sex',
  'dateOfBirth',
  'nationalities',
  'emailAddress',
] as const;

/** The first line of every CSV export, byte for byte. */
export const CSV_HEADER = `${CSV_COLUMNS.join(',')}\n`;

export interface ExistingExport {
  /** Counter of the last complete record (undefined: none yet). */
  last: number | undefined;
  /** Length of the file up to the end of its last complete record (or of the CSV header). */
  validBytes: number;
  totalBytes: number;
  /** CSV: the header line is whole and stays. */
  hasHeader: boolean;
}

const CSV_FIRST = `${CSV_COLUMNS[0]},`;
const RS = 0x1e;
const LF = 0x0a;

/**
 * What an existing export holds, or a CONFIG_INVALID error (exit 2) when the file is not a cut-off
 * export of `format`. Reads the file once from start to end; writes nothing.
 */
export async function inspectExistingExport(file: string, format: ExportFormat): Promise<ExistingExport> {
  const refuse = (why: string): never => {
    throw new StagecoachError(
      'CONFIG_INVALID',
      `${file} exists and is not a cut-off ${format} export of counterparties: ${why}; choose another --out, or --fresh to start over`,
      { file },
    );
  };
  const stat = await fsp.stat(file);
  if (!stat.isFile()) refuse('it is not a regular file');
  const size = stat.size;
  if (size === 0) return { last: undefined, validBytes: 0, totalBytes: 0, hasHeader: false };
  const head = await readBytes(file, 0, Math.min(size, CSV_HEADER.length));
  const other = formatOf(head);
  if (other !== format) {
    refuse(
      other
        ? `it is a ${other} export (--format ${other} continues it)`
        : `it does not start as this export does (${startDescription(format)})`,
    );
  }
  const endsWithLf = (await readBytes(file, size - 1, 1))[0] === LF;
  return format === 'csv' ? inspectCsv(file, size, endsWithLf, refuse) : inspectFrames(file, format, size, endsWithLf, refuse);
}

/** Which export format a file's first bytes belong to (a cut-off CSV header counts). */
function formatOf(head: Buffer): ExportFormat | undefined {
  if (head[0] === RS) return 'json-seq';
  if (head[0] === 0x7b) return 'jsonl';
  // Its first column's name (or the start of it): the exact header is checked by inspectCsv.
  const text = head.subarray(0, CSV_FIRST.length).toString('latin1');
  return CSV_FIRST.startsWith(text) ? 'csv' : undefined;
}

function startDescription(format: ExportFormat): string {
  if (format === 'csv') return 'expected the header line `sequenceNumber,referenceId,…`';
  return format === 'jsonl' ? 'expected a JSON record `{`' : 'expected RS (0x1E) and a JSON record';
}

/**
 * JSON Lines / json-seq through the project's own frame decoder: every record but the last must
 * be a whole JSON object with a sequenceNumber greater than the one before; the last may be cut
 * short (no final LF), and is then cut off.
 */
async function inspectFrames(
  file: string,
  format: 'jsonl' | 'json-seq',
  size: number,
  endsWithLf: boolean,
  refuse: (why: string) => never,
): Promise<ExistingExport> {
  let last: number | undefined;
  let validBytes = 0;
  // A frame that is acceptable only if nothing follows it (a record cut short by a crash).
  let cutShort: Frame | undefined;
  const where = (f: Frame) => `record ${f.index + 1} (byte ${f.offset})`;
  const onFrame = (f: Frame) => {
    if (cutShort) refuse(`${where(cutShort)} is cut short but more follows it`);
    if (f.kind === 'invalid') {
      // Only a record that starts as ours and runs to the end of the file (no final LF) is a
      // cut-off one; a cut inside a multi-byte character makes it "not valid UTF-8", also fine.
      if (f.reason !== 'too-large' && f.offset + f.bytes === size && !endsWithLf && f.text.startsWith('{')) cutShort = f;
      else refuse(`${where(f)} is not a counterparty record (${f.message})`);
      return;
    }
    // jsonl: `bytes` excludes the LF; json-seq: it includes it. A last record without LF is cut short.
    const end = format === 'jsonl' ? f.offset + f.bytes + 1 : f.offset + f.bytes;
    if (end > size || (end === size && !endsWithLf)) {
      cutShort = f;
      return;
    }
    const value = f.value;
    const counter =
      typeof value === 'object' && value !== null && !Array.isArray(value) ? readCounter(value as Record<string, unknown>) : undefined;
    if (counter === undefined) refuse(`${where(f)} is not a counterparty with a sequenceNumber`);
    if (last !== undefined && counter! <= last) refuse(`${where(f)} has sequenceNumber ${counter}, not after ${last}`);
    last = counter;
    validBytes = end;
  };
  const decoder = createFrameDecoder(format, onFrame);
  for await (const chunk of createReadStream(file)) decoder.write(chunk as Buffer);
  decoder.end();
  return { last, validBytes, totalBytes: size, hasHeader: false };
}

/**
 * CSV: the header line is exactly the one this export writes; every later record has the 18
 * columns and a sequenceNumber greater than the one before; only the last may be cut short (no
 * final LF, or a quote left open at the end of the file). Any other parse error refuses the file.
 */
async function inspectCsv(file: string, size: number, endsWithLf: boolean, refuse: (why: string) => never): Promise<ExistingExport> {
  const headerBytes = Buffer.byteLength(CSV_HEADER);
  const head = (await readBytes(file, 0, headerBytes)).toString('latin1');
  // A file that is the start of the header was cut while the header was written: start again.
  if (size < headerBytes && CSV_HEADER.startsWith(head)) return { last: undefined, validBytes: 0, totalBytes: size, hasHeader: false };
  if (head !== CSV_HEADER) refuse('its first line is not the header this export writes (`sequenceNumber,referenceId,…,emailAddress`)');
  let last: number | undefined;
  let validBytes = headerBytes;
  let line = 1; // the line the next record starts on (csv-parse counts lines the same way)
  const parser = parseCsv({
    record_delimiter: '\n',
    relax_column_count: true,
    // Called synchronously per record, so no record is lost to an error later in the same chunk.
    on_record: (record: string[], ctx: { bytes: number; lines: number }) => {
      const start = line;
      line = ctx.lines + 1;
      if (start === 1) return null; // the header, checked byte for byte above
      if (ctx.bytes === size && !endsWithLf) return null; // the last record, cut short
      if (record.length !== CSV_COLUMNS.length) refuse(`line ${start} has ${record.length} fields, expected ${CSV_COLUMNS.length}`);
      const seq = record[0] ?? '';
      if (!/^\d+$/.test(seq)) refuse(`line ${start} has sequenceNumber ${JSON.stringify(seq.slice(0, 40))}, expected digits`);
      if (last !== undefined && Number(seq) <= last) refuse(`line ${start} has sequenceNumber ${seq}, not after ${last}`);
      last = Number(seq);
      validBytes = ctx.bytes;
      return null;
    },
  });
  try {
    for await (const _ of createReadStream(file).pipe(parser)) {
      // records are all handled in on_record
    }
  } catch (err) {
    if (err instanceof StagecoachError) throw err;
    const code = (err as { code?: string }).code;
    // A quote still open at the end of the file: the last record was cut inside a quoted field.
    if (code !== 'CSV_QUOTE_NOT_CLOSED') refuse(`line ${line} does not parse as CSV (${(err as Error).message})`);
  }
  return { last, validBytes, totalBytes: size, hasHeader: true };
}

async function readBytes(file: string, at: number, length: number): Promise<Buffer> {
  const handle = await fsp.open(file, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buf, 0, length, at);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
