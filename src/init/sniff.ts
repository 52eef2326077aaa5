/**
 * Sniffing an export: from the first bytes of a file, the settings a pipeline source needs —
 * text encoding, CSV or JSON, the CSV dialect (delimiter, quote, header, line ends) or where the
 * records sit in a JSON document, or a fixed-width layout (record length, header and trailer
 * records, column boundaries). Pure: bytes in, a dialect and the evidence for it out, so the
 * reasons can be written next to each guess in the generated pipeline.
 */
import type { SourceEncoding } from '../pipeline/definition/schema.js';

export interface CsvDialect {
  kind: 'csv';
  encoding: SourceEncoding;
  delimiter: string;
  quote: string;
  header: boolean;
  lineEnd: 'LF' | 'CRLF' | 'CR';
  /** Column names: the header's, or `column1`… when there is none. */
  columns: string[];
  /** Sampled records the delimiter split into the modal number of fields, of all sampled. */
  split: { consistent: number; sampled: number };
  /** Why each setting was chosen, one line each. */
  evidence: string[];
}

export interface JsonDialect {
  kind: 'json' | 'jsonl';
  encoding: SourceEncoding;
  /** Dotted path of the array of records inside the document (json), undefined when the document is the array. */
  arrayPath?: string;
  evidence: string[];
}

export interface FixedWidthDialect {
  kind: 'fixed-width';
  encoding: SourceEncoding;
  /** Characters in a record. */
  length: number;
  /** Lines at the top that are no records (a header record). */
  header: number;
  /** The last line is a trailer; where it holds its first run of digits (a record count, checked by plan). */
  trailer?: { count?: { start: number; length: number } };
  /** The columns: from the layout the user gave, else the boundaries seen in the data (`column1`…). */
  columns: Array<{ name: string; start: number; length: number }>;
  /** Numeric columns with implied decimals (from a copybook's `V99`). */
  decimals: Record<string, number>;
  /** Whether the columns are named by a layout (else they are only proposed from the data). */
  named: boolean;
  /** A copybook's 88-level conditions per column (code tables, "not known" values). */
  conditions?: Record<string, Array<{ name: string; values: string[] }>>;
  /** The trailer line as read, while its count is not settled (trailerCountFrom). */
  trailerText?: string;
  evidence: string[];
}

export interface XlsxDialect {
  kind: 'xlsx';
  encoding: 'auto';
  /** The sheet's name. */
  sheet: string;
  /** The row that names the columns (1-based): the first whose cells look like names. */
  headerRow: number;
  columns: string[];
  evidence: string[];
}

export type Dialect = CsvDialect | JsonDialect | FixedWidthDialect | XlsxDialect;

/** How much of a file the sniffer looks at. */
export const SNIFF_BYTES = 256 * 1024;

const DELIMITERS = [';', ',', '\t', '|'] as const;
const DELIMITER_NAMES: Record<string, string> = { ';': 'semicolon', ',': 'comma', '\t': 'tab', '|': 'pipe' };

/**
 * The encoding of a file's head: a BOM decides; otherwise valid UTF-8 with non-ASCII text is
 * UTF-8, bytes that are not UTF-8 are windows-1252 (the encoding of legacy Windows exports).
 * @example sniffEncoding(Buffer.from('naam;Boër\n', 'latin1')).encoding // 'windows-1252'
 */
export function sniffEncoding(head: Buffer): { encoding: SourceEncoding; reason: string; text: string } {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf)
    return { encoding: 'utf-8-bom', reason: 'a UTF-8 byte order mark', text: head.subarray(3).toString('utf8') };
  if (head[0] === 0xff && head[1] === 0xfe)
    return { encoding: 'utf-16le', reason: 'a UTF-16LE byte order mark', text: head.subarray(2).toString('utf16le') };
  if (head[0] === 0xfe && head[1] === 0xff) {
    const swapped = Buffer.from(head.subarray(2));
    swapped.swap16();
    return { encoding: 'utf-16be', reason: 'a UTF-16BE byte order mark', text: swapped.toString('utf16le') };
  }
  // A read may cut a UTF-8 character in two at its end: judge the head without its last 3 bytes.
  const judged = head.length === SNIFF_BYTES ? head.subarray(0, head.length - 3) : head;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(judged);
    const nonAscii = judged.some((b) => b >= 0x80);
    return {
      encoding: 'utf-8',
      reason: nonAscii ? 'valid UTF-8 with non-ASCII letters' : 'plain ASCII (read as UTF-8)',
      text: head.toString('utf8'),
    };
  } catch {
    const high = judged.filter((b) => b >= 0x80).length;
    return {
      encoding: 'windows-1252',
      reason: `${high} byte(s) that are not UTF-8 (accented letters of a Windows export)`,
      text: head.toString('latin1'),
    };
  }
}

/** Splits one CSV line on `delimiter`, respecting quotes (enough to count fields in a head). */
function splitLine(line: string, delimiter: string, quote: string): string[] {
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === quote && line[i + 1] === quote) {
        field += quote;
        i++;
      } else if (c === quote) quoted = false;
      else field += c;
    } else if (c === quote && field === '') quoted = true;
    else if (c === delimiter) {
      out.push(field);
      field = '';
    } else field += c;
  }
  out.push(field);
  return out;
}

/** The complete records of a head (a quoted field may hold line breaks), at most `max`. */
function headRecords(text: string, quote: string, max: number): string[] {
  const records: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length && records.length < max; i++) {
    const c = text[i];
    if (c === quote) quoted = !quoted;
    else if (!quoted && (c === '\n' || c === '\r')) {
      if (i > start) records.push(text.slice(start, i));
      if (c === '\r' && text[i + 1] === '\n') i++;
      start = i + 1;
    }
  }
  return records.filter((r) => r.trim() !== '');
}

const looksLikeData = (v: string): boolean => /^[\d\s.,+\-/:]+$/.test(v.trim()) && /\d/.test(v) && v.trim() !== '';

/**
 * Whether a record names columns rather than holds data: no numbers or dates, no name twice, and
 * the records after it hold data (or there are none, or every cell is plainly a name). The one
 * test of a header for every export `init` reads (a CSV's first record, a workbook's rows).
 * @example looksLikeHeader(['klantnr', 'naam'], [['1001', 'Jansen']]) // true
 */
export function looksLikeHeader(first: readonly string[], rest: readonly (readonly string[])[]): boolean {
  const distinct = new Set(first.map((c) => c.toLowerCase())).size === first.length;
  return (
    first.length > 0 &&
    !first.some(looksLikeData) &&
    distinct &&
    (rest.some((r) => r.some(looksLikeData)) || rest.length === 0 || first.every((c) => /^[\p{L}_][\p{L}\p{N} _.\-/]*$/u.test(c)))
  );
}

/**
 * The CSV dialect of a file's head: the delimiter that splits the most lines into the same
 * number (more than one) of fields; a header when the first record holds no numbers or dates
 * and no repeated names while later records do hold data-looking values.
 */
export function sniffCsv(text: string, encoding: SourceEncoding, encodingReason: string): CsvDialect {
  // Single quotes only when fields are wrapped in them (a place like 's-Hertogenbosch starts with one).
  const wrapped = (q: string) => (text.match(new RegExp(`(^|[;,\\t|])${q}[^${q}\\r\\n]*${q}(?=[;,\\t|]|\\r?$)`, 'gm')) ?? []).length;
  const quote = wrapped("'") >= 5 && wrapped('"') === 0 ? "'" : '"';
  const records = headRecords(text, quote, 50);
  const complete = records.slice(0, Math.max(1, records.length - 1)); // the last may be cut off
  let best = { delimiter: ',', score: -1, fields: 1, consistent: 0 };
  for (const d of DELIMITERS) {
    const counts = complete.map((r) => splitLine(r, d, quote).length);
    const modal = mode(counts);
    const consistent = counts.filter((n) => n === modal).length;
    const score = modal > 1 ? consistent * 1000 + modal : -1;
    if (score > best.score) best = { delimiter: d, score, fields: modal, consistent };
  }
  const lineEnd = /\r\n/.test(text) ? 'CRLF' : /\r(?!\n)/.test(text) && !/\n/.test(text) ? 'CR' : 'LF';
  const first = records[0] ? splitLine(records[0], best.delimiter, quote).map((c) => c.trim()) : [];
  const rest = complete.slice(1, 20).map((r) => splitLine(r, best.delimiter, quote));
  const header = looksLikeHeader(first, rest);
  const columns = header ? first.map((c) => c.replace(/^\ufeff/, '')) : first.map((_c, i) => `column${i + 1}`);
  const evidence = [
    `encoding ${encoding}: ${encodingReason}`,
    `delimiter ${DELIMITER_NAMES[best.delimiter]}: ${best.consistent} of ${complete.length} sampled records split into ${best.fields} fields`,
    header
      ? 'header: the first record names the columns (no numbers or dates, no name twice)'
      : 'no header: the first record holds data; columns are named column1…',
    `line ends ${lineEnd}`,
  ];
  if (quote === "'") evidence.push("quote ': fields are quoted with single quotes");
  const split = { consistent: best.consistent, sampled: complete.length };
  return { kind: 'csv', encoding, delimiter: best.delimiter, quote, header, lineEnd, columns, split, evidence };
}

/** A character's class for comparing lines position by position: digit, blank or other. */
const classOf = (c: string | undefined) => (c === undefined ? 'e' : c >= '0' && c <= '9' ? 'd' : c === ' ' ? 's' : 'a');

/** Share of positions where a line has the class most record lines have there. */
function agreement(line: string, modal: string[]): number {
  let same = 0;
  for (let i = 0; i < modal.length; i++) if (classOf(line[i]) === modal[i]) same++;
  return same / Math.max(1, modal.length);
}

/**
 * A fixed-width file from its head (and last line): no delimiter splits its records into one
 * number of fields, nine in ten lines have one length, and they are blank-padded. Top lines and
 * a last line unlike the records (a header record, a trailer) are set apart; the column
 * boundaries are proposed where, in 95% of the lines, a blank run ends or digits meet letters —
 * or taken from the layout the user gave.
 */
export function sniffFixedWidth(
  text: string,
  encoding: SourceEncoding,
  encodingReason: string,
  options: {
    lastLine?: string;
    layout?: {
      columns: FixedWidthDialect['columns'];
      decimals: Record<string, number>;
      length: number;
      evidence: string;
      conditions?: FixedWidthDialect['conditions'];
      trailerCount?: { start: number; length: number; name: string };
    };
  } = {},
): FixedWidthDialect | undefined {
  const all = text.split(/\r\n|\n|\r/);
  if (all.length > 1) all.pop(); // the head may end inside a line
  const lines = all.filter((l) => l.trim() !== '');
  if (lines.length < 3) return undefined;
  const length = options.layout?.length ?? mode(lines.map((l) => l.length));
  const body = lines.filter((l) => l.length === length);
  const padded = body.filter((l) => /\S {2,}\S/.test(l)).length;
  if (length < 10 || body.length < 0.8 * lines.length || (!options.layout && padded < 0.8 * body.length)) return undefined;
  const sample = body.slice(Math.min(5, body.length - 1), 205);
  const modal: string[] = [];
  for (let i = 0; i < length; i++) {
    const counts: Record<string, number> = {};
    for (const l of sample) counts[classOf(l[i])] = (counts[classOf(l[i])] ?? 0) + 1;
    modal.push(Object.entries(counts).sort((a, b) => b[1] - a[1])[0]![0]);
  }
  let header = 0;
  while (header < Math.min(5, lines.length - 2) && (lines[header]!.length !== length || agreement(lines[header]!, modal) < 0.6)) header++;
  const last = options.lastLine ?? lines[lines.length - 1]!;
  const isTrailer = last.length !== length || agreement(last, modal) < 0.6;
  // The count where the trailer's own layout says it is; else the trailer's first run of digits,
  // which init narrows to the records it reads (trailerCountFrom: a hash total may follow it).
  const declared = options.layout?.trailerCount;
  const countRun = isTrailer && !declared ? /\d{3,}/.exec(last) : null;
  const count = declared
    ? { start: declared.start, length: declared.length }
    : countRun
      ? { start: countRun.index + 1, length: countRun[0].length }
      : undefined;
  let columns = options.layout?.columns;
  if (!columns) {
    const starts = [0];
    for (let p = 1; p < length; p++) {
      let cut = 0;
      for (const l of sample) {
        const a = classOf(l[p - 1]);
        const b = classOf(l[p]);
        if ((a === 's' && b !== 's') || (a === 'd' && b === 'a') || (a === 'a' && b === 'd')) cut++;
      }
      if (cut >= 0.95 * sample.length) starts.push(p);
    }
    columns = starts.map((st, i) => ({ name: `column${i + 1}`, start: st + 1, length: (starts[i + 1] ?? length) - st }));
  }
  const evidence = [
    `encoding ${encoding}: ${encodingReason}`,
    `fixed-width: no delimiter splits the records consistently; ${body.length} of ${lines.length} sampled lines are ${length} characters long, blank-padded`,
    header > 0 ? `header: the first ${header} line(s) are unlike the records (a header record)` : 'no header record',
    isTrailer
      ? `trailer: the last line is unlike the records${
          declared
            ? `; its record count at ${declared.start}-${declared.start + declared.length - 1} (${declared.name} of the layout's trailer record), which plan checks`
            : countRun
              ? `; its digits at ${countRun.index + 1}-${countRun.index + countRun[0].length} are taken as the record count, which plan checks`
              : ''
        }`
      : 'no trailer',
    options.layout
      ? options.layout.evidence
      : `columns: ${columns.length} proposed from the data (where blanks end or digits meet letters in 95% of lines); name them with --layout <copybook or name,start,length CSV>`,
  ];
  return {
    kind: 'fixed-width',
    encoding,
    length,
    header,
    ...(isTrailer ? { trailer: count ? { count } : {} } : {}),
    ...(isTrailer && countRun ? { trailerText: last } : {}),
    columns,
    decimals: options.layout?.decimals ?? {},
    named: options.layout !== undefined,
    ...(options.layout?.conditions ? { conditions: options.layout.conditions } : {}),
    evidence,
  };
}

function mode(values: number[]): number {
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best = 0;
  let bestCount = -1;
  for (const [v, c] of counts) if (c > bestCount || (c === bestCount && v > best)) [best, bestCount] = [v, c];
  return best;
}

/**
 * The longest array of objects in a parsed JSON document, as a dotted path ('' for the
 * document itself).
 * @example recordsPath({ export: { bedrijven: [{}, {}] } }) // 'export.bedrijven'
 */
export function recordsPath(doc: unknown): { path: string; items: number } | undefined {
  let best: { path: string; items: number } | undefined;
  const visit = (node: unknown, path: string, depth: number) => {
    if (depth > 6 || node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      const objects = node.filter((x) => x !== null && typeof x === 'object' && !Array.isArray(x)).length;
      if (objects > 0 && objects >= node.length / 2 && (!best || node.length > best.items)) best = { path, items: node.length };
      return;
    }
    for (const [k, v] of Object.entries(node)) if (!k.includes('.')) visit(v, path ? `${path}.${k}` : k, depth + 1);
  };
  visit(doc, '', 0);
  return best;
}

/**
 * The dialect of a file from its head (and, for a JSON document, the document itself, parsed
 * by the caller when small enough).
 */
export function sniff(head: Buffer, parseWhole?: () => unknown, options: Parameters<typeof sniffFixedWidth>[3] = {}): Dialect {
  const enc = sniffEncoding(head);
  const text = enc.text.replace(/^\ufeff/, '');
  const start = text.trimStart()[0];
  if (start === '{' || start === '[') {
    const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
    const jsonl = lines.length > 1 && lines.slice(0, Math.min(lines.length - 1, 20)).every((l) => isJsonObject(l));
    if (jsonl)
      return {
        kind: 'jsonl',
        encoding: enc.encoding,
        evidence: [`encoding ${enc.encoding}: ${enc.reason}`, 'JSON Lines: one JSON object a line'],
      };
    const doc = parseWhole?.();
    const found = doc === undefined ? undefined : recordsPath(doc);
    const evidence = [`encoding ${enc.encoding}: ${enc.reason}`];
    if (found) evidence.push(`records: the array of ${found.items} objects at ${found.path || 'the top level'}`);
    return { kind: 'json', encoding: enc.encoding, ...(found?.path ? { arrayPath: found.path } : {}), evidence };
  }
  const csv = sniffCsv(text, enc.encoding, enc.reason);
  if (options.layout || csv.columns.length === 1 || csv.split.consistent < 0.9 * csv.split.sampled) {
    const fixed = sniffFixedWidth(text, enc.encoding, enc.reason, options);
    if (fixed) return fixed;
  }
  return csv;
}

function isJsonObject(line: string): boolean {
  try {
    const v = JSON.parse(line) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  } catch {
    return false;
  }
}

/**
 * A trailer's count narrowed to the records read: a mainframe trailer often writes the record
 * count and a hash total side by side (`TRL000000150000000000074741092`), one run of digits. When
 * the run holds more digits than a count, the part that starts it and equals the records read
 * is the count (`000000150`); without such a part the run is kept, and plan reports the
 * difference, as it does for a cut-off file.
 * @example trailerCountFrom(d, 150) // { …d, trailer: { count: { start: 4, length: 9 } } }
 */
export function trailerCountFrom(d: FixedWidthDialect, records: number): FixedWidthDialect {
  const { trailerText, ...rest } = d;
  const count = d.trailer?.count;
  if (!count || trailerText === undefined) return rest;
  const run = trailerText.slice(count.start - 1, count.start - 1 + count.length);
  const digits = String(records).length;
  if (run.length <= digits || Number(run) === records) return rest;
  for (let length = digits; length < run.length; length++) {
    if (Number(run.slice(0, length)) !== records) continue;
    const narrowed = { start: count.start, length };
    return {
      ...rest,
      trailer: { count: narrowed },
      evidence: rest.evidence.map((e) =>
        e.startsWith('trailer:')
          ? `trailer: the last line is unlike the records; its digits at ${narrowed.start}-${narrowed.start + length - 1} state the ${records} records read (the ${run.length - length} digits after them, a hash total or the like, are not the count), which plan checks`
          : e,
      ),
    };
  }
  return rest;
}
