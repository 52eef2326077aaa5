/**
 * The hostile-input fuzzer (issue 41): seeded damage to every kind of file stagecoach reads —
 * CSV, JSON, JSON Lines, fixed-width, COBOL copybooks, pipeline and mapping YAML, corrections
 * files and XLSX workbooks — each read in-process through the library's own read entry, with a
 * time bound. A case holds when the read ends within its bound, and either reads (every row it
 * refuses names the file) or is refused with a StagecoachError whose message names the file.
 * Anything else — a hang, a bare error, a message without the file — is a failure, kept with
 * its seed so that it can be replayed (`fuzzCase(seed)`).
 *
 * Damage: byte flips, truncation, a duplicated stretch; for a workbook also a zip entry renamed
 * or duplicated. The seed alone makes the case: the same seed, the same bytes.
 * Seed ranges (house rule): DEVELOPMENT seeds are tuned on; CHECK seeds are only ever run.
 * The CI test runs the first few hundred DEVELOPMENT seeds, the bench (`npm run bench -- fuzz`)
 * 10,000 CHECK seeds.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { StagecoachError } from '../src/contract/errors.js';
import { parseLayout } from '../src/init/layout.js';
import { correctionsFormatOf } from '../src/pipeline/checks/corrections.js';
import { loadYamlFile } from '../src/pipeline/definition/yaml-file.js';
import { pipelineFileSchema } from '../src/pipeline/definition/schema.js';
import { mappingFileSchema } from '../src/pipeline/mapping/schema.js';
import { readSourceFile, type ReadableSource } from '../src/pipeline/source/index.js';
import { mulberry32 } from '../src/pipeline/samples/generate-crm.js';

export const DEVELOPMENT_SEEDS = { from: 1, to: 100_000 };
export const CHECK_SEEDS = { from: 1_000_001, to: 1_100_000 };

export const KINDS = ['csv', 'json', 'jsonl', 'fixed-width', 'copybook', 'pipeline', 'mapping', 'corrections', 'xlsx'] as const;
export type Kind = (typeof KINDS)[number];

export interface CaseResult {
  seed: number;
  kind: Kind;
  damage: string;
  /** read: rows came out (refused ones naming the file); refused: a clear error naming the file; failed: anything else. */
  outcome: 'read' | 'refused' | 'failed';
  ms: number;
  /** For `failed`: why (a hang, a bare error, a message without the file). */
  why?: string;
}

const CSV = [
  'nr;voorletters;achternaam;straat;plaats',
  '1001;A.;Visser;Dorpsstraat 1;Delft',
  '1002;B.;"de Vries";"Kerkweg 2\r\nachterhuis";Gouda',
  '1003;C.;"O""Brien";Laan 4;Ede',
  '1004;D.;Zoë;"Markt; 5";Utrecht',
  '',
].join('\r\n');
const JSON_ARRAY = `[\n${[1, 2, 3].map((n) => `  {"nr": "${n}", "naam": "Visser ${n}", "adres": {"straat": "Laan ${n}", "tel": ["0${n}0"]}}`).join(',\n')}\n]\n`;
const JSON_LINES = `${[1, 2, 3, 4].map((n) => `{"nr":"${n}","naam":"Zoë ${n}","t":"12:3${n}","a":{"b":[${n},{"c":"d"}]}}`).join('\n')}\n`;
const FIXED = ['000001Visser    Delft     ', '000002de Vries  Gouda     ', '000003Zoë       Ede       ', ''].join('\n');
const FIXED_OPTIONS = {
  columns: [
    { name: 'nr', start: 1, length: 6 },
    { name: 'naam', start: 7, length: 10 },
    { name: 'plaats', start: 17, length: 10 },
  ],
  header: 0,
  trim: true,
};
const COPYBOOK = [
  '      * klantenbestand',
  '       01 KLANT-REC.',
  '           05 KLANTNR        PIC 9(6).',
  '           05 NAAM           PIC X(30).',
  '           05 FILLER         PIC X(2).',
  '           05 SALDO          PIC S9(7)V99.',
  '',
].join('\n');
const PIPELINE = [
  'name: fuzz',
  'sources:',
  '  - name: klanten',
  '    format: csv',
  '    path: klanten.csv',
  '    csv: { delimiter: ";", quotes: strict }',
  '    mapping: mapping.yaml',
  'batching: { records: 100 }',
  'target:',
  '  referenceNamespace: 6b1f0a0e-3c1d-4f55-8a7e-2f2b8f0c9d11',
  '',
].join('\n');
const MAPPING = [
  'type: person',
  'key:',
  '  column: nr',
  '  scope: fuzz-klant',
  'record:',
  '  isActive: { value: true }',
  '  initials: { column: voorletters, transforms: [collapse-spaces, upper] }',
  '  surname: { column: achternaam, transforms: [collapse-spaces], required: true }',
  '  addresses:',
  '    - object:',
  '        type: { value: main }',
  '        addressLine1: { column: straat }',
  '        locality: { column: plaats }',
  '',
].join('\n');
const CORRECTIONS = `\ufeff_origin;nr;achternaam;error_field;error_code;error_message;error_stage;_row_hash\r\nk.csv:2;1001;"Vi""sser";achternaam;X;m;mapping;h\r\nk.csv:3;1002;Zoë;achternaam;X;"a; b";mapping;h\r\n`;

let workbook: Buffer | undefined;
/** A small workbook (made once): a header row, strings, numbers, a date. */
async function baseWorkbook(): Promise<Buffer> {
  if (workbook) return workbook;
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Klanten');
  ws.addRow(['nr', 'naam', 'geboren', 'saldo']);
  for (let i = 1; i <= 6; i++) ws.addRow([1000 + i, `Visser ${i}`, new Date(Date.UTC(1980, 0, i)), i * 10.5]);
  workbook = Buffer.from(await wb.xlsx.writeBuffer());
  return workbook;
}

/** The damage a seed does to a file's bytes: flips, a cut, or a stretch written twice. */
function damageBytes(bytes: Buffer, rnd: () => number): { bytes: Buffer; damage: string } {
  const pick = rnd();
  const at = () => Math.floor(rnd() * bytes.length);
  if (pick < 0.5) {
    const out = Buffer.from(bytes);
    const n = 1 + Math.floor(rnd() * 8);
    for (let i = 0; i < n; i++) out[at()] = Math.floor(rnd() * 256);
    return { bytes: out, damage: `${n} byte(s) flipped` };
  }
  if (pick < 0.75) {
    const cut = at();
    return { bytes: bytes.subarray(0, cut), damage: `cut at byte ${cut}` };
  }
  const from = at();
  const to = Math.min(bytes.length, from + 1 + Math.floor(rnd() * 64));
  const where = at();
  return {
    bytes: Buffer.concat([bytes.subarray(0, where), bytes.subarray(from, to), bytes.subarray(where)]),
    damage: `bytes ${from}–${to} written again at ${where}`,
  };
}

/** A workbook's damage: to its zip bytes, or to one entry (flips inside it, renamed, written twice). */
async function damageWorkbook(rnd: () => number): Promise<{ bytes: Buffer; damage: string }> {
  const base = await baseWorkbook();
  const pick = rnd();
  if (pick < 0.4) return damageBytes(base, rnd);
  const zip = await JSZip.loadAsync(base);
  const names = Object.keys(zip.files).filter((n) => !zip.files[n]!.dir);
  const name = names[Math.floor(rnd() * names.length)]!;
  const content = await zip.file(name)!.async('nodebuffer');
  let damage: string;
  if (pick < 0.7) {
    const hit = damageBytes(content, rnd);
    zip.file(name, hit.bytes);
    damage = `${name}: ${hit.damage}`;
  } else if (pick < 0.85) {
    zip.remove(name);
    const renamed = `${name}.renamed`;
    zip.file(renamed, content);
    damage = `${name} renamed to ${renamed}`;
  } else {
    const other = names[Math.floor(rnd() * names.length)]!;
    zip.file(other, content);
    damage = `${name} written again as ${other}`;
  }
  return { bytes: Buffer.from(await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' })), damage };
}

/** Reads every row of a source file; a row error must name the file. */
async function readRows(source: ReadableSource, path: string, file: string, signal: AbortSignal): Promise<string | undefined> {
  for await (const row of readSourceFile(source, { path, file }, { signal, hashRows: false })) {
    if ('code' in row && !row.message.includes(file)) return `a row error does not name the file: ${row.message.slice(0, 200)}`;
  }
  return undefined;
}

/** Reads one damaged file of its kind through the library's read entry; a problem found, or undefined. */
async function readKind(kind: Kind, path: string, file: string, signal: AbortSignal): Promise<string | undefined> {
  const base = { name: 'fuzz', encoding: 'auto' as const, csv: { delimiter: ';', quote: '"', header: true }, json: {} };
  switch (kind) {
    case 'csv':
      return readRows({ ...base, format: 'csv' } as ReadableSource, path, file, signal);
    case 'json':
    case 'jsonl':
      return readRows({ ...base, format: kind } as ReadableSource, path, file, signal);
    case 'fixed-width':
      return readRows({ ...base, format: 'fixed-width', fixedWidth: FIXED_OPTIONS } as ReadableSource, path, file, signal);
    case 'xlsx':
      return readRows({ ...base, format: 'xlsx', xlsx: { sheet: 1, headerRow: 1 } } as ReadableSource, path, file, signal);
    case 'corrections': {
      const format = await correctionsFormatOf(path);
      if (!format) return undefined; // no longer a corrections file: read as what it is elsewhere
      return readRows({ ...base, ...format, name: '_corrections' } as ReadableSource, path, file, signal);
    }
    case 'copybook': {
      const { readFileSync } = await import('node:fs');
      parseLayout(readFileSync(path, 'utf8'), file);
      return undefined;
    }
    case 'pipeline':
      await loadYamlFile(path, pipelineFileSchema, file);
      return undefined;
    case 'mapping':
      await loadYamlFile(path, mappingFileSchema, file);
      return undefined;
  }
}

const EXTENSION: Record<Kind, string> = {
  csv: 'csv',
  json: 'json',
  jsonl: 'jsonl',
  'fixed-width': 'txt',
  copybook: 'cpy',
  pipeline: 'yaml',
  mapping: 'yaml',
  corrections: 'corrections.csv',
  xlsx: 'xlsx',
};
/** Each kind's undamaged file (a workbook is made at run time). */
export const BASE: Record<Exclude<Kind, 'xlsx'>, string> = {
  csv: CSV,
  json: JSON_ARRAY,
  jsonl: JSON_LINES,
  'fixed-width': FIXED,
  copybook: COPYBOOK,
  pipeline: PIPELINE,
  mapping: MAPPING,
  corrections: CORRECTIONS,
};

/** Reads one kind's undamaged file (the fuzzer's baseline: it must read, or the cases test only refusals). */
export async function readBase(kind: Kind, dir: string): Promise<string | undefined> {
  mkdirSync(dir, { recursive: true });
  const file = `base.${EXTENSION[kind]}`;
  writeFileSync(join(dir, file), kind === 'xlsx' ? await baseWorkbook() : BASE[kind]);
  try {
    return await readKind(kind, join(dir, file), file, new AbortController().signal);
  } catch (err) {
    return (err as Error).message;
  }
}

/** The damaged file a seed makes: its kind, bytes and what was done to them. */
export async function fuzzInput(seed: number, kinds: readonly Kind[] = KINDS): Promise<{ kind: Kind; bytes: Buffer; damage: string }> {
  const rnd = mulberry32(seed);
  const kind = kinds[Math.floor(rnd() * kinds.length)]!;
  const hit = kind === 'xlsx' ? await damageWorkbook(rnd) : damageBytes(Buffer.from(BASE[kind]), rnd);
  return { kind, ...hit };
}

/**
 * Runs one case: makes its file in `dir` and reads it within `boundMs`.
 * @example await fuzzCase(17, '/tmp/fuzz', 5000) // { seed: 17, kind: 'jsonl', damage: 'cut at byte 40', outcome: 'read', … }
 */
export async function fuzzCase(seed: number, dir: string, boundMs: number, kinds: readonly Kind[] = KINDS): Promise<CaseResult> {
  const { kind, bytes, damage } = await fuzzInput(seed, kinds);
  mkdirSync(dir, { recursive: true });
  const file = `fuzz-${seed}.${EXTENSION[kind]}`;
  const path = join(dir, file);
  writeFileSync(path, bytes);
  const started = performance.now();
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<'hang'>((done) => {
    timer = setTimeout(() => {
      abort.abort();
      done('hang');
    }, boundMs);
  });
  let outcome: CaseResult['outcome'] = 'read';
  let why: string | undefined;
  try {
    const got = await Promise.race([readKind(kind, path, file, abort.signal), bound]);
    if (got === 'hang') {
      outcome = 'failed';
      why = `no end within ${boundMs} ms`;
    } else if (got !== undefined) {
      outcome = 'failed';
      why = got;
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (!(err instanceof StagecoachError)) {
      outcome = 'failed';
      why = `not a stagecoach error (${(err as Error)?.name ?? typeof err}): ${message.slice(0, 200)}`;
    } else if (!message.includes(file)) {
      outcome = 'failed';
      why = `the message does not name the file: ${message.slice(0, 200)}`;
    } else outcome = 'refused';
  } finally {
    clearTimeout(timer);
  }
  return { seed, kind, damage, outcome, ms: Math.round(performance.now() - started), ...(why ? { why } : {}) };
}
