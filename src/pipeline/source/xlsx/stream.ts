/**
 * XLSX sources: one sheet of a workbook (by name or position), read as a stream in bounded
 * memory (zip.ts, workbook-parts.ts, sheet-rows.ts: shared strings and styles held, rows never
 * kept, every part under the limits of options.ts), the row after `headerRow` on. Provenance is the workbook and the sheet's row number:
 * `line` is the row number and so is `byteOffset` (a zipped workbook has no byte a row starts
 * at; `rowAt` finds the row by its number). Messages name a row as `file:Sheet!12`.
 */
import { StagecoachError } from '../../../contract/errors.js';
import type { SourceRow, SourceRowError } from '../../types.js';
import { displayPath } from '../display-path.js';
import { rowHash } from '../row-hash.js';
import type { SourceTally } from '../tally.js';
import { type CellValue, cellValue, columnLetters, headerNames } from './cells.js';
import { countSheetRows, type SheetRowCount } from './count-rows.js';
import { defaultXlsxLimits, type XlsxLimits, type XlsxOptions } from './options.js';
import { readSheetRows, type SheetRow } from './sheet-rows.js';
import { openWorkbook, sharedStrings } from './workbook-parts.js';

export interface XlsxFileOptions {
  source: string;
  path: string;
  file: string;
  /** The sheet and header row; the limits are the defaults when not given. */
  xlsx: Omit<XlsxOptions, 'limits'> & { limits?: XlsxLimits | undefined };
  requiredColumns?: ReadonlySet<string>;
  signal?: AbortSignal;
  hashRows?: boolean;
  /** Stop after this row number (reading one row back). */
  lastRow?: number;
  /** The sheet's two-way count: the reader's rows here, the sheet's `<row>` elements counted apart (count-rows.ts). */
  tally?: SourceTally;
}

const BATCH = 500;

/**
 * A workbook's read, with what goes wrong below it (a bug, a file that vanished) turned into an
 * error that names the workbook: a read never ends in a bare message or a hang.
 */
async function* named<T>(file: string, rows: AsyncGenerator<T>, signal?: AbortSignal): AsyncGenerator<T> {
  try {
    yield* rows;
  } catch (err) {
    if (err instanceof StagecoachError || signal?.aborted) throw err;
    throw new StagecoachError(
      'SOURCE_READ_FAILED',
      `${file}: the workbook could not be read (${(err as Error).message}), expected an XLSX workbook: open it in Excel, save it again and retry`,
      { file },
      { cause: err },
    );
  }
}

/**
 * The rows of the sheet the options name; a sheet the workbook lacks is a configuration error
 * naming the ones it has. A position counts the sheets in the workbook's tab order (its
 * workbook part), not in the order its parts are stored.
 */
async function* sheetRows(path: string, file: string, xlsx: XlsxOptions, signal?: AbortSignal): AsyncGenerator<SheetRow> {
  const wb = await openWorkbook(path, file, xlsx.limits);
  const { sheet } = xlsx;
  const chosen = typeof sheet === 'number' ? wb.sheets[sheet - 1] : wb.sheets.find((s) => s.name === sheet);
  if (!chosen)
    throw new StagecoachError(
      'CONFIG_INVALID',
      `${file}: the workbook has no sheet ${typeof sheet === 'number' ? `number ${sheet}` : JSON.stringify(sheet)}, expected one of ${wb.sheets.map((s) => JSON.stringify(s.name)).join(', ') || '(none)'}`,
      { file, field: 'xlsx.sheet', value: String(sheet) },
    );
  const strings = await sharedStrings(wb, signal);
  for await (const row of readSheetRows(wb, chosen, strings, `${file}:${sheetLabel(sheet)}`, signal)) {
    signal?.throwIfAborted();
    yield row;
  }
}

/** A sheet's first rows, its cells as the mapping sees them (index 0: column A), and how many rows it has in all. */
export interface SheetHead {
  name: string;
  position: number;
  rows: { number: number; cells: CellValue[] }[];
  /** Rows of the sheet in all, the empty ones left out. */
  filledRows: number;
}

/**
 * The first `count` filled rows of every sheet of a workbook (for `init` to find each sheet's header row).
 * @example (await sheetHeads('klanten.xlsx', 20))[0] // { name: 'Klanten', position: 1, rows: [{ number: 1, cells: ['nr', 'naam'] }, …], filledRows: 201 }
 */
export async function sheetHeads(path: string, count: number, limits: XlsxLimits = defaultXlsxLimits): Promise<SheetHead[]> {
  const file = displayPath(path);
  const heads: SheetHead[] = [];
  async function* all(): AsyncGenerator<SheetHead> {
    const wb = await openWorkbook(path, file, limits);
    const strings = await sharedStrings(wb);
    for (const [i, sheet] of wb.sheets.entries()) {
      const head: SheetHead = { name: sheet.name, position: i + 1, rows: [], filledRows: 0 };
      for await (const row of readSheetRows(wb, sheet, strings, `${file}:${sheet.name}`)) {
        const cells = row.values.slice(1).map(cellValue);
        if (cells.every((c) => c === undefined)) continue;
        head.filledRows++;
        if (head.rows.length < count) head.rows.push({ number: row.number, cells });
      }
      yield head;
    }
  }
  for await (const head of named(file, all())) heads.push(head);
  return heads;
}

/** The sheet's name as messages show it. */
const sheetLabel = (sheet: string | number) => (typeof sheet === 'number' ? `sheet ${sheet}` : sheet);

/**
 * The records of a workbook's sheet, in batches.
 * @example for await (const batch of readXlsxBatches({ source: 'klanten', path, file, xlsx: { sheet: 'Klanten', headerRow: 1 } })) …
 */
export async function* readXlsxBatches(opts: XlsxFileOptions): AsyncGenerator<(SourceRow | SourceRowError)[]> {
  const xlsx = { ...opts.xlsx, limits: opts.xlsx.limits ?? defaultXlsxLimits };
  const { path } = opts;
  const tally = opts.tally;
  // Started now, awaited at the end: the count inflates the sheet a second time while the reader parses it.
  // Stopped when the read ends, however it ends: a count left running would inflate a hostile sheet on its own.
  const stopCount = new AbortController();
  const counting: Promise<SheetRowCount | undefined | Error> | undefined = tally
    ? countSheetRows(path, xlsx.sheet, xlsx.limits, stopCount.signal).catch((err: Error) => err)
    : undefined;
  try {
    yield* records({ ...opts, xlsx }, counting);
  } finally {
    stopCount.abort();
  }
}

/** {@link readXlsxBatches} once the count is under way. */
async function* records(
  opts: XlsxFileOptions & { xlsx: XlsxOptions },
  counting: Promise<SheetRowCount | undefined | Error> | undefined,
): AsyncGenerator<(SourceRow | SourceRowError)[]> {
  const { source, path, file, xlsx, tally } = opts;
  const hashRows = opts.hashRows !== false;
  const where = (row: number, column?: number) => `${file}:${sheetLabel(xlsx.sheet)}!${column ? columnLetters(column) : ''}${row}`;
  let columns: string[] | undefined;
  let read = 0;
  let batch: (SourceRow | SourceRowError)[] = [];
  for await (const row of named(file, sheetRows(path, file, xlsx, opts.signal), opts.signal)) {
    if (row.number < xlsx.headerRow) {
      if (tally && row.values.some((v) => cellValue(v) !== undefined)) tally.headerLines++; // a title row above the header
      continue;
    }
    if (row.number === xlsx.headerRow) {
      if (tally && row.values.some((v) => cellValue(v) !== undefined)) tally.headerLines++;
      columns = headerNames(row.values);
      for (const name of opts.requiredColumns ?? [])
        if (!columns.includes(name))
          throw new StagecoachError(
            'CONFIG_INVALID',
            `${where(row.number)}: the mapping reads column ${JSON.stringify(name)}, expected it in the header row (${columns.join(', ')})`,
            { file, field: name },
          );
      continue;
    }
    if (!columns) break; // rows before the header row only: see below
    if (opts.lastRow !== undefined && row.number > opts.lastRow) break;
    const values: Record<string, unknown> = {};
    const problems: string[] = [];
    let filled = false;
    for (let i = 1; i < row.values.length; i++) {
      const v = cellValue(row.values[i]);
      if (v === undefined) continue;
      filled = true;
      if (typeof v === 'object') problems.push(`cell ${where(row.number, i)} ${v.error}, expected a value`);
      else if (i > columns.length)
        problems.push(
          `cell ${where(row.number, i)} holds ${JSON.stringify(v)} beyond the header's last column (${columnLetters(columns.length)})`,
        );
      else values[columns[i - 1]!] = v;
    }
    if (!filled) continue; // an empty row (trailing rows a spreadsheet keeps formatted)
    const hash = hashRows ? rowHash(JSON.stringify(row.values.slice(1).map(cellValue))) : '';
    const provenance = { file, line: row.number, byteOffset: row.number, hash };
    read++;
    if (tally) {
      tally.rowsRead++;
      tally.linesInRows++;
      if (problems.length > 0) tally.rowErrors++;
    }
    if (problems.length > 0)
      batch.push({
        source,
        provenance,
        code: 'SOURCE_ROW_INVALID',
        message: `${where(row.number)}: ${problems.join('; ')}`,
        raw: JSON.stringify(values).slice(0, 200),
      });
    else batch.push({ source, values, provenance });
    if (batch.length >= BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (!columns)
    throw new StagecoachError(
      'SOURCE_READ_FAILED',
      `${file}:${sheetLabel(xlsx.sheet)}!${xlsx.headerRow}: the sheet has no header row, expected the column names on row ${xlsx.headerRow} (xlsx.headerRow)`,
      { file },
    );
  if (batch.length > 0) yield batch;
  if (read === 0 && opts.lastRow === undefined) {
    // As every format: an export without rows is a read failure, not a short success.
    const why = `the sheet holds no rows after its header row ${xlsx.headerRow}`;
    if (tally) tally.truncated = `${why}: no rows`;
    yield [
      {
        source,
        provenance: { file, line: xlsx.headerRow, byteOffset: xlsx.headerRow, hash: '' },
        code: 'SOURCE_READ_FAILED',
        message: `${where(xlsx.headerRow)}: ${why}, expected at least one record; an empty export is refused unless truncated files are allowed (--allow-truncated)`,
        raw: '',
      },
    ];
  }
  if (tally && counting) await countInto(tally, file, await counting);
}

/** The independent count into the tally: every `<row>` is a header row, an empty row or a row read. */
async function countInto(tally: SourceTally, file: string, count: SheetRowCount | undefined | Error): Promise<void> {
  if (count instanceof Error || count === undefined) {
    const why = count instanceof Error ? count.message : 'the sheet was not found by its name or position in xl/workbook.xml';
    tally.truncated = `the sheet's rows could not be counted apart from the reader: ${why}`;
    throw new StagecoachError('SOURCE_READ_FAILED', `${file}: ${tally.truncated}`, { file });
  }
  tally.physicalLines = count.rows;
  tally.blankLines = count.emptyRows;
}

/** The column names of the sheet's header row. */
export async function xlsxHeader(path: string, file: string, xlsx: XlsxOptions): Promise<string[]> {
  for await (const row of named(file, sheetRows(path, file, xlsx))) if (row.number === xlsx.headerRow) return headerNames(row.values);
  return [];
}
