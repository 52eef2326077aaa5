/**
 * `stagecoach init`: from a lender's own export files to a pipeline that `plan` accepts. Sniffs
 * each file's dialect, profiles its columns, guesses the mapping of each to staged
 * counterparties, writes `pipeline.yaml` and one mapping per source with every guess explained,
 * and runs `plan` on the result. Nothing is sent anywhere. docs/init.md.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StagecoachError } from '../contract/errors.js';
import { loadPipeline } from '../pipeline/definition/load-pipeline.js';
import { summarisePlan, type PlanSummary } from '../pipeline/read-pipeline.js';
import { roleOf } from './dictionary.js';
import { guessMapping, type GuessedMapping } from './guess.js';
import { profileFile, type FileProfile } from './profile.js';
import { parseLayout, type RecordLayout } from './layout.js';
import { type Dialect, SNIFF_BYTES, sniff, trailerCountFrom } from './sniff.js';
import { mappingYaml, pipelineYaml } from './write-yaml.js';
import { sniffWorkbook } from './workbook.js';
import { type ChildGuess, childDeclarationsYaml, recogniseTableDump } from './table-dump.js';

export {
  sniff,
  sniffEncoding,
  sniffCsv,
  sniffFixedWidth,
  recordsPath,
  type Dialect,
  type CsvDialect,
  type JsonDialect,
  type FixedWidthDialect,
  type XlsxDialect,
} from './sniff.js';
export { sniffWorkbook } from './workbook.js';
export { parseLayout, type RecordLayout } from './layout.js';
export { ColumnProfiler, profileFile, type FileProfile, type ColumnProfile } from './profile.js';
export { guessMapping, type GuessedMapping } from './guess.js';

/** Extensions `init` takes from a folder. */
const EXPORT_EXTENSIONS = new Set(['.csv', '.txt', '.tsv', '.json', '.jsonl', '.ndjson', '.dat', '.xlsx']);
/** Extensions of Excel workbooks: read sheet by sheet (workbook.ts), not sniffed as text. */
const WORKBOOK_EXTENSIONS = new Set(['.xlsx', '.xlsm']);
/** A JSON document up to this size is parsed whole to find its array of records. */
const JSON_PARSE_LIMIT = 256 * 1024 * 1024;

export interface InitOptions {
  /** Export files, or folders of them. */
  inputs: string[];
  /** Folder to write pipeline.yaml and mappings/ into (default: the working folder). */
  outDir?: string;
  /** Overwrite files that exist. */
  force?: boolean;
  /** Name of the pipeline (default: the out folder's name). */
  name?: string;
  /** Profile at most this many rows per file (default: all). */
  maxRows?: number;
  /** A record layout for fixed-width exports: a COBOL copybook or a name,start,length CSV. */
  layout?: string;
  /** Run `plan` on what was written (default true). */
  plan?: boolean;
  signal?: AbortSignal;
  /** Called as the files are read: profiled (rows so far, per file) and planned (rows, share of the bytes). */
  onProgress?: (progress: InitProgress) => void;
}

export interface InitProgress {
  step: 'profile' | 'plan';
  rowsRead: number;
  /** The file being profiled. */
  file?: string;
  /** `plan`: share of the source bytes read. */
  fraction?: number | undefined;
}

export interface InitSource {
  name: string;
  file: string;
  dialect: Dialect;
  profile: { rows: number; columns: number };
  mapping: GuessedMapping;
  mappingFile: string;
}

export interface InitResult {
  pipelineFile: string;
  sources: InitSource[];
  /** Everything left to decide: the TODOs of every mapping. */
  todos: string[];
  plan?: PlanSummary;
  /** Files that look like child tables of another (table-dump.ts), proposed in pipeline.yaml. */
  children?: ChildGuess[];
}

/**
 * @example const r = await initPipeline({ inputs: ['exports/'], outDir: 'migration' });
 *          r.todos // ['klanten: dateOfBirth: …']
 */
export async function initPipeline(options: InitOptions): Promise<InitResult> {
  const outDir = resolve(options.outDir ?? '.');
  const files = await listInputs(options.inputs);
  if (files.length === 0)
    throw new StagecoachError(
      'CONFIG_INVALID',
      `init: no export files in ${options.inputs.join(', ')} (expected ${[...EXPORT_EXTENSIONS].join(' ')})`,
    );
  const pipelineFile = join(outDir, 'pipeline.yaml');
  const names = uniqueNames(files);

  const layout = options.layout
    ? parseLayout(await readFile(options.layout, 'utf8'), relative(process.cwd(), resolve(options.layout)) || options.layout)
    : undefined;
  const read: Array<{ name: string; path: string; dialect: Dialect; profile: FileProfile }> = [];
  const taken = new Set(names);
  for (const [i, path] of files.entries()) {
    const shown = relative(process.cwd(), path) || path;
    // A workbook holds a source per export sheet, named after its file and, when it has several, its sheet.
    const dialects = WORKBOOK_EXTENSIONS.has(extname(path).toLowerCase())
      ? await sniffWorkbook(path, shown)
      : [await sniffFile(path, layout)];
    for (const dialect of dialects) {
      const name = dialect.kind === 'xlsx' && dialects.length > 1 ? uniqueName(`${names[i]}_${dialect.sheet}`, taken) : names[i]!;
      const profile = await profileOf(name, path, shown, dialect, options);
      // A trailer's count is settled against the records read (whole file profiled only).
      const settled =
        dialect.kind === 'fixed-width' ? trailerCountFrom(dialect, options.maxRows === undefined ? profile.rows : -1) : dialect;
      read.push({ name, path, dialect: settled, profile });
    }
  }

  // Persons first, so organisations' director relations can point at their scope.
  const decimalsOf = (d: Dialect) =>
    d.kind === 'fixed-width' ? { impliedDecimals: d.decimals, ...(d.conditions ? { conditions: d.conditions } : {}) } : {};
  const guesses = read.map((r) => ({ ...r, mapping: withLayoutTodo(r.dialect, guessMapping(r.name, r.profile, decimalsOf(r.dialect))) }));
  leaveOutNotesSheets(guesses);
  const personScope = guesses.find((g) => g.mapping.type === 'person')?.mapping.scope;
  const ordered = guesses
    .map((g) =>
      g.mapping.type === 'organisation' && personScope
        ? { ...g, mapping: withLayoutTodo(g.dialect, guessMapping(g.name, g.profile, { personScope, ...decimalsOf(g.dialect) })) }
        : g,
    )
    .sort((a, b) => (a.mapping.type === b.mapping.type ? 0 : a.mapping.type === 'person' ? -1 : 1));

  const schemas = schemaDir();
  const writes: Array<[string, string]> = [];
  const sources: InitSource[] = [];
  for (const g of ordered) {
    const mappingFile = join(outDir, 'mappings', `${g.name}.yaml`);
    const schema =
      schemas && existsSync(join(schemas, 'mapping.schema.json'))
        ? relative(dirname(mappingFile), join(schemas, 'mapping.schema.json'))
        : undefined;
    writes.push([mappingFile, mappingYaml(g.mapping, { source: g.name, file: relative(outDir, g.path), ...(schema ? { schema } : {}) })]);
    sources.push({
      name: g.name,
      file: g.path,
      dialect: g.dialect,
      profile: { rows: g.profile.rows, columns: g.profile.columns.length },
      mapping: g.mapping,
      mappingFile,
    });
  }
  const pipelineSchema =
    schemas && existsSync(join(schemas, 'pipeline.schema.json')) ? relative(outDir, join(schemas, 'pipeline.schema.json')) : undefined;
  writes.unshift([
    pipelineFile,
    pipelineYaml({
      name: options.name ?? (basename(outDir).replace(/[^A-Za-z0-9_-]/g, '-') || 'migration'),
      namespace: randomUUID(),
      files: files.map((f) => relative(outDir, f)),
      sources: sources.map((s) => ({
        name: s.name,
        path: relative(outDir, s.file),
        dialect: s.dialect,
        mapping: relative(outDir, s.mappingFile),
      })),
      ...(pipelineSchema ? { schema: pipelineSchema } : {}),
    }),
  ]);

  // A table dump: child tables proposed, each guess explained (table-dump.ts).
  const children = recogniseTableDump(guesses.map((g) => ({ name: g.name, profile: g.profile, keyColumn: g.mapping.keyColumn })));
  writes[0]![1] += childDeclarationsYaml(children);

  const existing = writes.filter(([f]) => existsSync(f)).map(([f]) => relative(process.cwd(), f) || f);
  if (existing.length > 0 && !options.force)
    throw new StagecoachError(
      'CONFIG_INVALID',
      `init: ${existing.join(', ')} exist${existing.length === 1 ? 's' : ''}; nothing was written (--force overwrites)`,
    );
  for (const [file, text] of writes) {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
  }

  const todos = sources.flatMap((s) => s.mapping.todos.map((t) => `${s.name}: ${t}`));
  const result: InitResult = { pipelineFile, sources, todos, ...(children.length > 0 ? { children } : {}) };
  if (options.plan !== false) {
    const def = await loadPipeline(pipelineFile);
    result.plan = await summarisePlan(def, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onProgress
        ? { onProgress: (p) => options.onProgress!({ step: 'plan', rowsRead: p.rowsRead, fraction: p.fraction }) }
        : {}),
    });
  }
  return result;
}

/** The fields that make a source a person's or a company's: without one, a sheet holds no counterparties. */
const IDENTITY_FIELDS = new Set(['surname', 'organisationName', 'firstName', 'initials', 'dateOfBirth']);

/**
 * A workbook's sheet that names no person or company column (a notes sheet: `Column`, `Meaning`)
 * is left out when another sheet of the workbook is an export, and the sources of that workbook
 * say so, as for the sheets that hold no header row (docs/init.md).
 */
function leaveOutNotesSheets(guesses: Array<{ path: string; dialect: Dialect; mapping: GuessedMapping }>): void {
  const isNotes = (g: (typeof guesses)[number]) => g.dialect.kind === 'xlsx' && !g.mapping.fields.some((f) => IDENTITY_FIELDS.has(f.name));
  for (let i = guesses.length - 1; i >= 0; i--) {
    const g = guesses[i]!;
    if (g.dialect.kind !== 'xlsx' || !isNotes(g)) continue;
    const siblings = guesses.filter((o) => o !== g && o.path === g.path && !isNotes(o));
    if (siblings.length === 0) continue;
    guesses.splice(i, 1);
    for (const s of siblings)
      s.dialect.evidence.push(
        `sheet ${JSON.stringify(g.dialect.sheet)} left out: none of its columns names a person or a company (${g.mapping.unmapped
          .slice(0, 4)
          .map((u) => u.column)
          .join(', ')}…): notes, not records`,
      );
  }
}

/** Profiles one source's rows (a file, or a sheet of a workbook) as `plan` will read them. */
function profileOf(name: string, path: string, file: string, dialect: Dialect, options: InitOptions): Promise<FileProfile> {
  const source = {
    name,
    format: dialect.kind,
    encoding: dialect.encoding,
    csv:
      dialect.kind === 'csv'
        ? {
            delimiter: dialect.delimiter,
            quote: dialect.quote,
            header: dialect.header,
            ...(dialect.header ? {} : { columns: dialect.columns }),
          }
        : { delimiter: ',', quote: '"', header: true },
    json: dialect.kind === 'json' && dialect.arrayPath ? { path: dialect.arrayPath } : {},
    ...(dialect.kind === 'fixed-width' ? { fixedWidth: fixedWidthOptions(dialect) } : {}),
    ...(dialect.kind === 'xlsx' ? { xlsx: { sheet: dialect.sheet, headerRow: dialect.headerRow } } : {}),
  };
  return profileFile(
    source,
    { path, file },
    {
      keyHint: (c) => roleOf(c) === 'key' || roleOf(c) === 'cocNumber',
      ...(options.maxRows !== undefined ? { maxRows: options.maxRows } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onProgress ? { onRows: (rowsRead: number) => options.onProgress!({ step: 'profile', file: path, rowsRead }) } : {}),
    },
  );
}

/** The package's JSON Schemas folder, when it ships one. */
function schemaDir(): string | undefined {
  const dir = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'schemas');
  return existsSync(dir) ? dir : undefined;
}

async function listInputs(inputs: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const input of inputs) {
    const path = resolve(input);
    const s = await stat(path).catch(() => undefined);
    if (!s) throw new StagecoachError('CONFIG_INVALID', `init: ${input} does not exist`, { file: input });
    if (s.isDirectory()) {
      const entries = (await readdir(path)).filter((f) => EXPORT_EXTENSIONS.has(extname(f).toLowerCase())).sort();
      out.push(...entries.map((f) => join(path, f)));
    } else out.push(path);
  }
  return out;
}

/** Source names from file names: letters, digits, _ and -, unique. */
function uniqueNames(files: string[]): string[] {
  const seen = new Map<string, number>();
  return files.map((f) => {
    const base =
      basename(f, extname(f))
        .replace(/[^A-Za-z0-9_-]+/g, '_')
        .replace(/^_+|_+$/g, '') || 'source';
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return n === 1 ? base : `${base}_${n}`;
  });
}

/** `base` made a source name (letters, digits, _ and -) that `taken` does not hold yet; taken from then on. */
function uniqueName(base: string, taken: Set<string>): string {
  const clean = base.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '') || 'source';
  let name = clean;
  for (let n = 2; taken.has(name); n++) name = `${clean}_${n}`;
  taken.add(name);
  return name;
}

/** The fixed-width source options of a sniffed dialect. */
function fixedWidthOptions(d: Extract<Dialect, { kind: 'fixed-width' }>) {
  return { columns: d.columns, header: d.header, trim: true, length: d.length, ...(d.trailer ? { trailer: d.trailer } : {}) };
}

/** A fixed-width file without a layout: its columns are only proposed, which the mapping's TODOs say first. */
function withLayoutTodo(d: Dialect, m: GuessedMapping): GuessedMapping {
  if (d.kind !== 'fixed-width' || d.named) return m;
  return {
    ...m,
    todos: [
      `the columns of this fixed-width file are only proposed from the data (${d.columns.map((c) => `${c.name} ${c.start}-${c.start + c.length - 1}`).join(', ')}); name them: stagecoach init <file> --layout <COBOL copybook or name,start,length CSV>`,
      ...m.todos,
    ],
  };
}

/** Sniffs a file from its head (and last line); a JSON document small enough is parsed to find its records. */
async function sniffFile(path: string, layout: RecordLayout | undefined): Promise<Dialect> {
  const fh = await open(path, 'r');
  let head: Buffer;
  let tail: Buffer;
  const size = (await stat(path)).size;
  try {
    const buf = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await fh.read(buf, 0, SNIFF_BYTES, 0);
    head = buf.subarray(0, bytesRead);
    const tailBytes = Math.min(size, 4096);
    const tbuf = Buffer.alloc(tailBytes);
    await fh.read(tbuf, 0, tailBytes, size - tailBytes);
    tail = tbuf;
  } finally {
    await fh.close();
  }
  const lastLine = tail
    .toString('latin1')
    .split(/\r\n|\n|\r/)
    .filter((l) => l.trim() !== '')
    .pop();
  const fixed = { ...(lastLine !== undefined ? { lastLine } : {}), ...(layout ? { layout } : {}) };
  let whole: unknown;
  const dialect = sniff(
    head,
    () => {
      if (size > JSON_PARSE_LIMIT) return undefined;
      return whole;
    },
    fixed,
  );
  if (dialect.kind !== 'json' || size > JSON_PARSE_LIMIT) return dialect;
  const bytes = await readFile(path);
  const text =
    dialect.encoding === 'utf-16le'
      ? bytes.toString('utf16le')
      : dialect.encoding === 'windows-1252'
        ? bytes.toString('latin1')
        : bytes.toString('utf8');
  try {
    whole = JSON.parse(text.replace(/^\ufeff/, ''));
  } catch {
    return dialect; // a broken document: plan names where it breaks
  }
  return sniff(head, () => whole);
}
