/**
 * XLSX sources: one sheet of a workbook (by name or position), read as a stream with exceljs's
 * streaming WorkbookReader in bounded memory (shared strings and styles held, rows never
 * kept), the row after `headerRow` on. Provenance is the workbook and the sheet's row number:
 * `line` is the row number and so is `byteOffset` (a zipped workbook has no byte a row starts
 * at; `rowAt` finds the row by its number). Messages name a row as `file:Sheet!12`.
 */
import { StagecoachError } from '../../../contract/errors.js';
import type { SourceRow, SourceRowError } from '../../types.js';
import { displayPath } from '../display-path.js';
import { rowHash } from '../row-hash.js';
import type { SourceTally } from '../tally.js';
import { type CellValue, cellValue, columnLetters, headerNames } from './cells.js';
import { countSheetRows, type SheetRowCount, workbookSheets } from './count-rows.js';
import type { XlsxOptions } from './options.js';

export interface XlsxFileOptions {
  source: string;
  path: string;
  file: string;
  xlsx: XlsxOptions;
  requiredColumns?: ReadonlySet<string>;
  signal?: AbortSignal;
  hashRows?: boolean;
  /** Stop after this row number (reading one row back). */
  lastRow?: number;
  /** The sheet's two-way count: the reader's rows here, the sheet's `<row>` elements counted apart (count-rows.ts). */
  tally?: SourceTally;
}

const BATCH = 500;

interface SheetRow {
  number: number;
  values: unknown[];
}

/** What exceljs's `parse()` hands over: a worksheet, or (in 4.4, without the eventType its README shows) a shared string. */
interface ParseEvent {
  eventType?: string;
  value?: unknown;
  index?: number;
  text?: unknown;
}

type WorksheetReader = AsyncIterable<{ number: number; values: unknown }> & { name?: string };

/** What walking a workbook meets, in order: a sheet's start (its name, its position), its rows, its end. */
type WorkbookEvent = { kind: 'sheet'; name: string; position: number } | { kind: 'row'; row: SheetRow } | { kind: 'end'; name: string };

/**
 * Every sheet of a workbook and its rows, streamed, shared strings resolved.
 *
 * Shared strings are emitted and resolved here rather than cached by exceljs: with them cached,
 * a workbook that stores its sheets after its shared strings but before `xl/workbook.xml` (zip
 * entry order is the writer's choice) makes exceljs's reader fail with "Cannot read properties of
 * undefined (reading 'sheets')". Emitted, exceljs always parks the sheets until the whole zip is
 * read, so the workbook part is known whatever the order.
 */
async function* exceljsEvents(path: string, signal?: AbortSignal): AsyncGenerator<WorkbookEvent> {
  // Loaded when a workbook is read, not with the format registry: exceljs (through bluebird)
  // compiles code from strings as it loads, which every run of a CSV or JSON pipeline would pay
  // for and which a process started with --disallow-code-generation-from-strings refuses.
  const { default: ExcelJS } = await import('exceljs');
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(path, {
    sharedStrings: 'emit',
    styles: 'cache',
    worksheets: 'emit',
    hyperlinks: 'ignore',
    entries: 'ignore',
  });
  const strings: unknown[] = [];
  const resolve = (v: unknown) =>
    v !== null && typeof v === 'object' && 'sharedString' in v ? strings[(v as { sharedString: number }).sharedString] : v;
  let position = 0;
  for await (const event of reader.parse() as unknown as AsyncIterable<ParseEvent>) {
    if (event.eventType === undefined && typeof event.index === 'number') {
      strings[event.index] = event.text;
      continue;
    }
    if (event.eventType === 'shared-strings') {
      const s = event.value as { index: number; text: unknown };
      strings[s.index] = s.text;
      continue;
    }
    if (event.eventType !== 'worksheet') continue;
    const ws = event.value as WorksheetReader;
    position++;
    const name = ws.name ?? String(position);
    yield { kind: 'sheet', name, position };
    for await (const row of ws) {
      signal?.throwIfAborted();
      const values = (row.values as unknown[]) ?? [];
      yield { kind: 'row', row: { number: row.number, values: values.map(resolve) } };
    }
    yield { kind: 'end', name };
  }
}

/**
 * {@link exceljsEvents}, with what exceljs throws turned into an error that names the workbook.
 * exceljs's streaming reader has been seen to fail now and then, on a machine under load, with
 * "Cannot read properties of undefined (reading 'sheets')" on a workbook it reads the next time:
 * when that happens before anything was handed on, the workbook is read once more from its start
 * (reading has no side effects); a second failure, or one after rows were handed on, is final.
 */
async function* workbookEvents(path: string, signal?: AbortSignal): AsyncGenerator<WorkbookEvent> {
  for (let attempt = 1; ; attempt++) {
    let handedOn = false;
    try {
      for await (const event of exceljsEvents(path, signal)) {
        handedOn = true;
        yield event;
      }
      return;
    } catch (err) {
      if (err instanceof StagecoachError || signal?.aborted) throw err;
      if (!handedOn && attempt === 1) continue;
      throw new StagecoachError(
        'SOURCE_READ_FAILED',
        `${displayPath(path)}: the workbook could not be read (${(err as Error).message}), expected an XLSX workbook: open it in Excel, save it again and retry`,
        { file: displayPath(path) },
      );
    }
  }
}

/**
 * The rows of the sheet the options name; a sheet the workbook lacks is a configuration error
 * naming the ones it has. A position counts the sheets in the workbook's tab order (its
 * workbook part), not in the order its parts are stored, which is how exceljs meets them.
 */
async function* sheetRows(path: string, file: string, sheet: string | number, signal?: AbortSignal): AsyncGenerator<SheetRow> {
  const seen: string[] = [];
  const name = typeof sheet === 'number' ? (await workbookSheets(path))[sheet - 1]?.name : sheet;
  let chosen = false;
  for await (const event of workbookEvents(path, signal)) {
    if (event.kind === 'sheet') {
      seen.push(event.name);
      chosen = event.name === name;
    } else if (!chosen) continue;
    else if (event.kind === 'row') yield event.row;
    else return;
  }
  throw new StagecoachError(
    'CONFIG_INVALID',
    `${file}: the workbook has no sheet ${typeof sheet === 'number' ? `number ${sheet}` : JSON.stringify(sheet)}, expected one of ${seen.map((s) => JSON.stringify(s)).join(', ') || '(none)'}`,
    { file, field: 'xlsx.sheet', value: String(sheet) },
  );
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
export async function sheetHeads(path: string, count: number): Promise<SheetHead[]> {
  const heads: SheetHead[] = [];
  for await (const event of workbookEvents(path)) {
    if (event.kind === 'sheet') heads.push({ name: event.name, position: event.position, rows: [], filledRows: 0 });
    if (event.kind !== 'row') continue;
    const cells = event.row.values.slice(1).map(cellValue);
    if (cells.every((c) => c === undefined)) continue;
    const head = heads[heads.length - 1]!;
    head.filledRows++;
    if (head.rows.length < count) head.rows.push({ number: event.row.number, cells });
  }
  return heads;
}

/** The sheet's name as messages show it. */
const sheetLabel = (sheet: string | number) => (typeof sheet === 'number' ? `sheet ${sheet}` : sheet);

/**
 * The records of a workbook's sheet, in batches.
 * @example for await (const batch of readXlsxBatches({ source: 'klanten', path, file, xlsx: { sheet: 'Klanten', headerRow: 1 } })) …
 */
export async function* readXlsxBatches(opts: XlsxFileOptions): AsyncGenerator<(SourceRow | SourceRowError)[]> {
  const { source, path, file, xlsx } = opts;
  const hashRows = opts.hashRows !== false;
  const where = (row: number, column?: number) => `${file}:${sheetLabel(xlsx.sheet)}!${column ? columnLetters(column) : ''}${row}`;
  const tally = opts.tally;
  // Started now, awaited at the end: the count inflates the sheet a second time while exceljs parses it.
  const counting: Promise<SheetRowCount | undefined | Error> | undefined = tally
    ? countSheetRows(path, xlsx.sheet).catch((err: Error) => err)
    : undefined;
  let columns: string[] | undefined;
  let read = 0;
  let batch: (SourceRow | SourceRowError)[] = [];
  for await (const row of sheetRows(path, file, xlsx.sheet, opts.signal)) {
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
      if (typeof v === 'object') problems.push(`cell ${where(row.number, i)} holds the error ${v.error}, expected a value`);
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
  for await (const row of sheetRows(path, file, xlsx.sheet)) if (row.number === xlsx.headerRow) return headerNames(row.values);
  return [];
}
