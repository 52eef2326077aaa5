/**
 * The configuration, checked before a run touches the platform: no migration is looked up or
 * created and no record is sent until the pipeline's mappings compile with their scripts, every
 * source lists its files, no file is plainly in another encoding than declared (UTF-16 declared
 * as UTF-8, source/encoding.ts), and every column its mapping reads is one its files have, as
 * far as the source's format can tell before reading (its `missingColumns`: a CSV file's header,
 * a fixed-width layout; not JSON, whose records name their own fields, nor XLSX, whose header
 * row the reader checks as it reads). Found later, in the middle of reading, such an error used to
 * leave an empty migration behind on the platform.
 *
 * A column a header lacks is reported where it is read, at the mapping's line, with the file
 * whose header lacks it: that line is what the user edits (or the export's header). Errors that
 * are not the configuration's (a file that cannot be opened) are left to the run, which reports
 * them at their place among the files it reads.
 */
import { readFile } from 'node:fs/promises';
import { StagecoachError } from '../../contract/errors.js';
import { cutText, quotedNames } from '../../contract/cut.js';
import type { PipelineDefinition } from '../definition/load-pipeline.js';
import { locateValue } from '../definition/yaml-file.js';
import { preparePipeline, type PreparedSource } from '../prepare-pipeline.js';
import { detectEncoding } from '../source/encoding.js';
import { formatOf, type MissingColumns } from '../source/index.js';
import { undecidedFields } from '../mapping/schema.js';

/**
 * Throws CONFIG_INVALID when the pipeline cannot be read as declared; reads only the headers.
 * @example await checkConfiguration(await loadPipeline('pipelines/crm.yaml')); // then attach to the platform
 */
export async function checkConfiguration(
  def: PipelineDefinition,
  signal?: AbortSignal,
  options: { stageUndecided?: boolean } = {},
): Promise<void> {
  if (!options.stageUndecided) await refuseUndecided(def);
  const { sources } = await preparePipeline(def);
  for (const s of sources) {
    for (const f of s.files) await detectEncoding(f.path, f.file, s.def.encoding).catch(configurationOnly);
    const check = formatOf(s.def.format).missingColumns;
    if (!check) continue; // the format cannot tell before reading: its reader checks as it reads
    for (const f of s.files) {
      const found = await check(s.def, f, { required: s.mapping.columns, pipelineFile: def.file, signal });
      if (found) throw await missingColumns(s, found);
    }
  }
}

/** Where a pipeline's mappings hold undecided fields: `mappings/x.yaml:23`, the field and its question. */
export async function undecidedPoints(def: PipelineDefinition): Promise<Array<{ at: string; field: string; question: string }>> {
  const out: Array<{ at: string; field: string; question: string }> = [];
  const seen = new Set<string>();
  for (const s of def.sources) {
    const mapping = s.mappingFile;
    if (seen.has(mapping.path)) continue;
    seen.add(mapping.path);
    const points = undecidedFields(mapping.spec);
    if (points.length === 0) continue;
    const text = await readFile(mapping.path, 'utf8');
    for (const p of points) {
      const loc = locateValue(text, p.question, { keys: ['undecided'], skip: ['codes'] });
      out.push({ at: loc ? `${mapping.display}:${loc.line}` : mapping.display, field: p.path, question: p.question });
    }
  }
  return out;
}

/**
 * Nothing is sent while a field is undecided: a default would decide its value for every record
 * (an income staged Yearly where the export meant monthly). `--stage-undecided` stages the
 * records without those fields instead.
 */
async function refuseUndecided(def: PipelineDefinition): Promise<void> {
  const points = await undecidedPoints(def);
  if (points.length === 0) return;
  throw new StagecoachError(
    'CONFIG_INVALID',
    [
      `${def.file}: ${points.length} field${points.length === 1 ? ' is' : 's are'} undecided; nothing was read or sent. Decide each (replace the field by its draft, corrected), or stage the records without them with --stage-undecided:`,
      ...points.map((p) => `  ${p.at}: ${p.field}: ${p.question}`),
    ].join('\n'),
    { file: points[0]!.at.replace(/:\d+$/, '') },
  );
}

/** Rethrows a configuration error; any other (a file that cannot be read) is the run's to report where it reads. */
function configurationOnly(err: unknown): void {
  if (err instanceof StagecoachError && err.code === 'CONFIG_INVALID') throw err;
}

/** The error of columns read by a mapping and missing from `where` (its format found them), at the mapping line reading the first. */
async function missingColumns(s: PreparedSource, { missing, present, where }: MissingColumns): Promise<StagecoachError> {
  const mapping = s.def.mappingFile;
  const text = await readFile(mapping.path, 'utf8');
  const at = missing.map((column) => ({ column, loc: locateValue(text, column, { keys: ['column', 'each'], skip: ['codes'] }) }));
  // the field that reads it: record.dateOfBirth, not record.dateOfBirth.column
  const reader = (path: string) => path.replace(/\.(column|each)$/, '');
  const place = (x: (typeof at)[number]) => (x.loc ? `${mapping.display}:${x.loc.line}:${x.loc.column}` : mapping.display);
  const first = at[0]!;
  const others = at.slice(1).map((x) => `${JSON.stringify(cutText(x.column))} (${place(x)})`);
  return new StagecoachError(
    'CONFIG_INVALID',
    `${place(first)}: ${first.loc ? `${reader(first.loc.path)} reads` : 'the mapping reads'} column ${JSON.stringify(cutText(first.column))}, which ${where} lacks${
      others.length > 0 ? `; it lacks ${others.join(', ')} too` : ''
    }; expected one of ${quotedNames(present)}`,
    {
      file: mapping.display,
      ...(first.loc ? { line: first.loc.line, column: first.loc.column } : {}),
      field: first.column,
    },
  );
}
