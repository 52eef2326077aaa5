/**
 * Record layouts the user gives `init --layout` for a fixed-width export: a COBOL copybook (the
 * common `PIC X(n)`, `PIC 9(n)`, `PIC S9(n)V99`, `FILLER`, group levels) or a simple
 * `name,start,length` CSV. Out: the columns by position (1-based, as the fixed-width source
 * declares them) and the implied decimals of numeric fields (`V99`: the value's last two digits
 * are cents), which init maps as amounts. What it cannot lay out as text (binary `COMP` fields,
 * `OCCURS`, `REDEFINES`) is refused naming the line. Pure: text in, layout out.
 */
import { StagecoachError } from '../contract/errors.js';
import { readLimits } from '../pipeline/read-limits.js';

export interface RecordLayout {
  columns: Array<{ name: string; start: number; length: number }>;
  /** Numeric columns with implied decimals: name → digits after the implied point. */
  decimals: Record<string, number>;
  /** Characters in a record (where the last field ends, FILLER included). */
  length: number;
  /** What the layout was read as, for the pipeline's comments. */
  evidence: string;
  /** A copybook's 88-level conditions per field: each condition's name and the values it names (code tables, "not known" dates). */
  conditions?: Record<string, Array<{ name: string; values: string[] }>>;
  /** Where the trailer record (a copybook's `01 …-TRAILER`) holds the record count. */
  trailerCount?: { start: number; length: number; name: string };
}

/** A record of a copybook named as a header or trailer (`01 XX-TRAILER.`, `01 HDR-REC.`), not the data record. */
const TRAILER_RECORD = /(^|-)(TRAILER|TRLR|TRL|FOOTER|EOF|END)(-|$)/i;
const HEADER_RECORD = /(^|-)(HEADER|HDR|HEAD)(-|$)/i;
/** A trailer field that counts the records. */
const COUNT_FIELD = /(^|-)(COUNT|CNT|RECS|RECORDS|REC-CNT|NBR|NUM|ANZ|ANZAHL|AANTAL|NOMBRE|TOTAL-RECS)(-|$)/i;

/** The values an 88-level's VALUE clause names: `'M'`, `19000101`, `ZEROS`, `'A' 'B'`, `1 THRU 9` (ranges left out). */
function conditionValues(rest: string, length: number): string[] {
  const clause = /\bVALUES?\s+(?:ARE\s+|IS\s+)?(.*)$/i.exec(rest)?.[1] ?? '';
  const out: string[] = [];
  for (const m of clause.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) {
    const v = m[1] ?? m[2] ?? m[3]!;
    if (/^THRU|THROUGH$/i.test(v)) return out; // a range is no code
    if (/^ZEROE?S?$/i.test(v)) out.push('0'.repeat(length));
    else if (/^(SPACES?|LOW-VALUES?|HIGH-VALUES?)$/i.test(v)) continue;
    else out.push(v);
  }
  return out;
}

/**
 * @example parseLayout('01 R.\n 05 NR PIC 9(4).\n 05 FILLER PIC X.\n 05 BEDRAG PIC S9(5)V99.', 'r.cpy')
 *          // { columns: [{ name: 'NR', start: 1, length: 4 }, { name: 'BEDRAG', start: 6, length: 7 }], decimals: { BEDRAG: 2 }, length: 12, … }
 */
export function parseLayout(text: string, file: string): RecordLayout {
  return /\bPIC(TURE)?\b/i.test(text) ? parseCopybook(text, file) : parseLayoutCsv(text, file);
}

const bad = (file: string, line: number, what: string) => new StagecoachError('CONFIG_INVALID', `${file}:${line}: ${what}`, { file, line });

/**
 * The characters a PIC clause takes and its digits after an implied point: `S9(7)V99` → 9 and 2.
 * Counted, not expanded: `X(999999999999999)` is refused at its line past the field limit
 * instead of building a string of that length.
 */
function picture(pic: string, file: string, line: number): { length: number; decimals: number } {
  const upper = pic.toUpperCase();
  if (!/^S?(?:[X9AZ](?:\(\d+\))?)*(?:V(?:9(?:\(\d+\))?)*)?$/.test(upper))
    throw bad(file, line, `PIC ${pic} is not a picture init can lay out, expected X(n), A(n), 9(n), S9(n)V99 and the like`);
  const max = readLimits().STAGECOACH_LAYOUT_MAX_FIELD;
  const length = countSymbols(upper);
  if (length > max)
    throw bad(
      file,
      line,
      `PIC ${pic} spans more than ${max} characters (the limit STAGECOACH_LAYOUT_MAX_FIELD), expected a field of at most ${max}`,
    );
  if (length === 0) throw bad(file, line, `PIC ${pic} is not a picture init can lay out, expected X(n), A(n), 9(n), S9(n)V99 and the like`);
  const point = upper.indexOf('V');
  return { length, decimals: point < 0 ? 0 : countSymbols(upper.slice(point + 1)) };
}

/** Characters a run of picture symbols takes (`99`, `9(3)`). */
function countSymbols(text: string): number {
  let n = 0;
  for (const [, , times] of text.matchAll(/([X9AZ])(?:\((\d+)\))?/g)) n += times === undefined ? 1 : Number(times);
  return n;
}

function parseCopybook(text: string, file: string): RecordLayout {
  // Statements end at a full stop; comment lines (a `*` in column 7 or first) and sequence numbers are dropped.
  const statements: Array<{ text: string; line: number }> = [];
  let current = '';
  let startLine = 1;
  text.split(/\r?\n/).forEach((raw, i) => {
    const fixedFormat = /^\d{6}/.test(raw) || /^.{6}[*\-/ ]/.test(raw);
    const indicator = fixedFormat ? raw[6] : undefined;
    if (raw.trim().startsWith('*') || indicator === '*' || indicator === '/') return;
    const body = (/^\d{6}/.test(raw) ? raw.slice(7, 72) : raw).trim();
    if (body === '') return;
    if (current === '') startLine = i + 1;
    current += ` ${body}`;
    while (current.includes('.')) {
      const dot = current.search(/\.(\s|$)/);
      if (dot < 0) break;
      statements.push({ text: current.slice(0, dot).trim(), line: startLine });
      current = current.slice(dot + 1);
      startLine = i + 1;
    }
  });
  const columns: RecordLayout['columns'] = [];
  const decimals: Record<string, number> = {};
  const conditions: NonNullable<RecordLayout['conditions']> = {};
  let trailerCount: RecordLayout['trailerCount'];
  let position = 1;
  /** Which 01-level record the statements belong to: the data record (the first other one), a header or a trailer. */
  let record: 'data' | 'header' | 'trailer' | 'done' = 'data';
  let seenData = false;
  let trailerPosition = 1;
  let lastField: { name: string; length: number } | undefined;
  for (const s of statements) {
    const m = /^(\d{1,2})\s+([A-Z0-9][A-Z0-9-]*)\s*(.*)$/i.exec(s.text);
    if (!m) continue;
    const [, level, name, rest] = m as unknown as [string, string, string, string];
    if (level === '01' || level === '1') {
      // A copybook may describe the header and trailer records too: each is laid out apart.
      record = TRAILER_RECORD.test(name) ? 'trailer' : HEADER_RECORD.test(name) ? 'header' : seenData ? 'done' : 'data';
      if (record === 'data') seenData = true;
      trailerPosition = 1;
      if (!/\bPIC/i.test(rest)) continue;
    }
    if (level === '88') {
      if (record === 'data' && lastField)
        (conditions[lastField.name] ??= []).push({ name, values: conditionValues(rest, lastField.length) });
      continue;
    }
    if (level === '66') continue;
    if (record === 'header' || record === 'done') continue;
    if (record === 'trailer') {
      const pic = /\bPIC(?:TURE)?\s+(?:IS\s+)?(\S+)/i.exec(rest);
      if (!pic) continue;
      const length = picture(pic[1]!, file, s.line).length;
      if (!trailerCount && COUNT_FIELD.test(name)) trailerCount = { start: trailerPosition, length, name };
      trailerPosition += length;
      continue;
    }
    if (/\b(OCCURS|REDEFINES)\b/i.test(rest))
      throw bad(
        file,
        s.line,
        `${name}: ${/OCCURS/i.test(rest) ? 'OCCURS' : 'REDEFINES'} is not laid out by init; give the columns as a name,start,length CSV`,
      );
    if (/\bCOMP(UTATIONAL)?(-\d)?\b|\bBINARY\b|\bPACKED-DECIMAL\b/i.test(rest))
      throw bad(file, s.line, `${name}: a binary field (COMP) cannot be read as text; export it as display digits`);
    const pic = /\bPIC(?:TURE)?\s+(?:IS\s+)?(\S+)/i.exec(rest);
    if (!pic) continue; // a group level: its fields follow
    const p = picture(pic[1]!, file, s.line);
    const separateSign = /\bSIGN\b.*\bSEPARATE\b/i.test(rest) ? 1 : 0;
    const length = p.length + separateSign;
    if (name.toUpperCase() !== 'FILLER') {
      columns.push({ name, start: position, length });
      if (p.decimals > 0) decimals[name] = p.decimals;
    }
    lastField = { name, length };
    position += length;
  }
  if (columns.length === 0) throw bad(file, 1, 'no field with a PIC clause, expected a COBOL copybook (05 NAME PIC X(20).)');
  return {
    columns,
    decimals,
    length: position - 1,
    evidence: `COBOL copybook ${file}: ${columns.length} fields, ${position - 1} characters a record${trailerCount ? `; the trailer record's ${trailerCount.name} counts the records` : ''}`,
    ...(Object.keys(conditions).length > 0 ? { conditions } : {}),
    ...(trailerCount ? { trailerCount } : {}),
  };
}

function parseLayoutCsv(text: string, file: string): RecordLayout {
  const lines = text.split(/\r?\n/);
  const columns: RecordLayout['columns'] = [];
  const decimals: Record<string, number> = {};
  lines.forEach((raw, i) => {
    const cells = raw.split(/[;,\t]/).map((c) => c.trim());
    if (raw.trim() === '' || (i === 0 && !/^\d+$/.test(cells[1] ?? ''))) return; // blank, or the header
    const [name, start, length, dec] = cells;
    if (!name || !/^\d+$/.test(start ?? '') || !/^\d+$/.test(length ?? ''))
      throw bad(file, i + 1, `expected name,start,length (start 1-based), got \`${raw}\``);
    const max = readLimits().STAGECOACH_LAYOUT_MAX_FIELD;
    if (Number(length) > max || Number(start) > Number.MAX_SAFE_INTEGER)
      throw bad(
        file,
        i + 1,
        `${name}: ${length} characters is more than the limit of ${max} (STAGECOACH_LAYOUT_MAX_FIELD), expected a field of at most ${max}`,
      );
    columns.push({ name, start: Number(start), length: Number(length) });
    if (dec && /^\d+$/.test(dec) && Number(dec) > 0) decimals[name] = Number(dec);
  });
  if (columns.length === 0) throw bad(file, 1, 'no columns, expected lines of name,start,length');
  const length = Math.max(...columns.map((c) => c.start + c.length - 1));
  return { columns, decimals, length, evidence: `layout ${file}: ${columns.length} columns, ${length} characters a record` };
}
