/**
 * The CSV part of the configuration check before a run touches the platform: the columns a
 * mapping reads that a file's header (or its declared `csv.columns`) lacks, found by the reader
 * itself on the file's first rows, so the check and the run agree on the header to the letter
 * (a byte-order mark, blanks around names, the delimiter, the encoding).
 */
import { StagecoachError } from '../../../contract/errors.js';
import type { ColumnsCheck, MissingColumns, SourceFile } from '../format.js';
import type { SourceEncoding } from '../encoding.js';
import type { CsvOptions } from './options.js';
import { readCsvBatches } from './read-csv.js';

/**
 * Reads the file's header (its first read) with the columns the mapping reads.
 * @example await csvMissingColumns({ name: 'klanten', encoding: 'auto', csv }, file, { required, pipelineFile })
 *          // { missing: ['geboortedatum_iso'], present: ['klantnr', …], where: 'the header of klanten.csv (klanten.csv:1)' }
 */
export async function csvMissingColumns(
  source: { name: string; encoding: SourceEncoding; csv: CsvOptions },
  file: SourceFile,
  check: ColumnsCheck,
): Promise<MissingColumns | undefined> {
  const rows = readCsvBatches({
    source: source.name,
    path: file.path,
    file: file.file,
    encoding: source.encoding,
    csv: source.csv,
    requiredColumns: check.required,
    hashRows: false,
    signal: check.signal,
  });
  try {
    await rows.next();
    return undefined;
  } catch (err) {
    if (!(err instanceof StagecoachError) || err.code !== 'CONFIG_INVALID') return undefined; // the run reports it where it reads
    const c = err.context;
    // A header that is no text in the declared encoding: the reader's words say why (and what to declare).
    if (Array.isArray(c.missingColumns) && !c.headerDefect)
      return {
        missing: c.missingColumns as string[],
        present: c.headerColumns as string[],
        where: `the header of ${file.file} (${file.file}:${c.line})`,
      };
    throw err;
  } finally {
    await rows.return(undefined);
  }
}
