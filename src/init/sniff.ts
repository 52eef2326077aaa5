/**
 * Sniffing an export: from the first bytes of a file, the settings a pipeline source needs —
 * text encoding, CSV or JSON, the CSV dialect (delimiter, quote, header, line ends) or where the
 * records sit in a JSON document. Pure: bytes in, a dialect and the evidence for it out, so the
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

export type Dialect = CsvDialect | JsonDialect;

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
  const firstHasData = first.some(looksLikeData);
  const restHasData = rest.some((r) => r.some(looksLikeData));
  const distinct = new Set(first.map((c) => c.toLowerCase())).size === first.length;
  const header =
    first.length > 0 &&
    !firstHasData &&
    distinct &&
    (restHasData || rest.length === 0 || first.every((c) => /^[\p{L}_][\p{L}\p{N} _.\-/]*$/u.test(c)));
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
  return { kind: 'csv', encoding, delimiter: best.delimiter, quote, header, lineEnd, columns, evidence };
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
export function sniff(head: Buffer, parseWhole?: () => unknown): Dialect {
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
  return sniffCsv(text, enc.encoding, enc.reason);
}

function isJsonObject(line: string): boolean {
  try {
    const v = JSON.parse(line) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  } catch {
    return false;
  }
}
