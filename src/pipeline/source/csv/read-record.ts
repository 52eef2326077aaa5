/**
 * Single records of a CSV file, read by the same core as the pipeline reads the file: its header,
 * and the record that starts at a byte offset (the corrections file and the report show a refused
 * row as the legacy system wrote it). Reads only as far as it needs.
 */
import type { SourceEncoding } from '../encoding.js';
import type { CsvOptions } from './options.js';
import { detectEncoding } from '../encoding.js';
import { CsvCore, type CsvReadOutcome } from './core.js';
import { feedCore } from '../feed-core.js';
import { fileChunks } from '../file-chunks.js';

/** The CSV options that matter for one record; the pipeline's defaults for the others. */
export type CsvRecordFormat = { encoding: SourceEncoding; csv?: Partial<CsvOptions> | undefined };

const READ_BYTES = 16 * 1024;

function dialectOf(format: CsvRecordFormat) {
  return { delimiter: format.csv?.delimiter ?? ',', quote: format.csv?.quote ?? '"' };
}

/**
 * The columns of a CSV file: its declared ones, else its header (names trimmed, as the reader
 * takes them); none when it has no header and declares none.
 * @example await csvHeader('samples/crm/klanten.csv', { encoding: 'auto', csv: { delimiter: ';' } }) // ['klantnr', …]
 */
export async function csvHeader(path: string, format: CsvRecordFormat): Promise<string[]> {
  if (format.csv?.columns?.length) return [...format.csv.columns];
  if (format.csv?.header === false) return [];
  const enc = await detectEncoding(path, path, format.encoding);
  const outcome: CsvReadOutcome = { endLine: 0, endByte: 0, endedAtRecord: true };
  const core = new CsvCore({
    source: '',
    file: path,
    dialect: { ...dialectOf(format), header: true, encoding: enc },
    outcome,
    records: { take: () => {} },
  });
  for await (const _ of feedCore(core, fileChunks(path, path, enc, { readBytes: READ_BYTES }), { everyChunk: true }))
    if (outcome.columns) break;
  return outcome.columns ?? [];
}

/**
 * The fields of the record that starts at `start` (any number of them); `unreadable` when the
 * reader refuses it there (an unclosed quote), undefined past the last record.
 */
export async function csvRecordAt(path: string, start: number, format: CsvRecordFormat): Promise<string[] | 'unreadable' | undefined> {
  const enc = await detectEncoding(path, path, format.encoding);
  let first: string[] | 'unreadable' | undefined;
  const core = new CsvCore({
    source: '',
    file: path,
    // Two placeholder columns: the record's own width is what comes back; with one, a line of
    // blanks would count as a record of one empty field.
    dialect: { ...dialectOf(format), header: false, columns: ['', ''], encoding: enc },
    range: { start, line: 1 },
    records: { take: (fields) => (first ??= fields), refused: () => (first ??= 'unreadable') },
  });
  const chunks = fileChunks(path, path, enc, { readBytes: READ_BYTES, range: { start } });
  for await (const _ of feedCore(core, chunks, { everyChunk: true })) if (first) return first;
  return first;
}
