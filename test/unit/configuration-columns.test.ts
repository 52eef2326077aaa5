/**
 * The configuration check before a run touches the platform asks each format, through the
 * registry's `missingColumns`, for the columns a mapping reads that a file lacks: a CSV file's
 * header, a fixed-width layout; JSON, JSON Lines and XLSX say they cannot tell before reading.
 * Every registered format has a case here (the record is keyed by the registry's formats), on
 * real files, with the whole message the user sees.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import type { StagecoachError } from '../../src/contract/errors.js';
import { checkConfiguration } from '../../src/pipeline/read/configuration.js';
import { loadPipeline } from '../../src/pipeline/definition/load-pipeline.js';
import type { SourceFormat } from '../../src/pipeline/definition/schema.js';
import { displayPath, SOURCE_FORMATS } from '../../src/pipeline/source/index.js';
import { onePeopleSourcePipeline } from '../support/pipeline-text.js';
import { tempDir } from '../support/service.js';

const PEOPLE = [
  { nr: '1001', naam: 'Jansen', plaats: 'Utrecht' },
  { nr: '1002', naam: 'de Vries', plaats: 'Zwolle' },
];
const pad = (s: string, n: number) => s.padEnd(n).slice(0, n);

/** A file of the format holding PEOPLE in the columns nr, naam, plaats; the pipeline lines that read it. */
interface Sample {
  file: string;
  write(path: string): Promise<void>;
  options: string[];
  /** What the check says of a mapping that reads `woonplaats` and `geboortedatum` (undefined: nothing before reading). */
  refusal: ((at: { pipeline: string; mapping: string; data: string }) => string) | undefined;
}

const SAMPLES: Record<SourceFormat, Sample> = {
  csv: {
    file: 'people.csv',
    // a byte-order mark and blanks around the names: the check reads the header as the reader does
    write: async (path) =>
      writeFileSync(path, `\ufeffnr; naam ;plaats\n${PEOPLE.map((p) => `${p.nr};${p.naam};${p.plaats}`).join('\n')}\n`),
    options: ['csv: { delimiter: ";" }'],
    refusal: ({ mapping, data }) =>
      `${mapping}:8:24: record.firstName reads column "woonplaats", which the header of ${data} (${data}:1) lacks; it lacks "geboortedatum" (${mapping}:9:26) too; expected one of "nr", "naam", "plaats"`,
  },
  json: {
    file: 'people.json',
    write: async (path) => writeFileSync(path, JSON.stringify(PEOPLE)),
    options: [],
    refusal: undefined,
  },
  jsonl: {
    file: 'people.jsonl',
    write: async (path) => writeFileSync(path, PEOPLE.map((p) => `${JSON.stringify(p)}\n`).join('')),
    options: [],
    refusal: undefined,
  },
  'fixed-width': {
    file: 'people.txt',
    write: async (path) => writeFileSync(path, `${PEOPLE.map((p) => pad(p.nr, 6) + pad(p.naam, 20) + pad(p.plaats, 14)).join('\n')}\n`),
    options: [
      'fixedWidth:',
      '      header: 0',
      '      columns:',
      '        - { name: nr, start: 1, length: 6 }',
      '        - { name: naam, start: 7, length: 20 }',
      '        - { name: plaats, start: 27, length: 14 }',
    ],
    refusal: ({ pipeline, mapping }) =>
      `${mapping}:8:24: record.firstName reads column "woonplaats", which fixedWidth.columns of source people in ${pipeline} lacks; it lacks "geboortedatum" (${mapping}:9:26) too; expected one of "nr", "naam", "plaats"`,
  },
  xlsx: {
    file: 'people.xlsx',
    async write(path) {
      const wb = new ExcelJS.Workbook();
      const ws = wb.addWorksheet('Klanten');
      ws.addRow(['nr', 'naam', 'plaats']);
      for (const p of PEOPLE) ws.addRow([p.nr, p.naam, p.plaats]);
      await wb.xlsx.writeFile(path);
    },
    options: ['xlsx: { sheet: Klanten }'],
    refusal: undefined,
  },
};

const mapping = (firstName: string, birth: string | undefined) =>
  [
    'type: person',
    'key: { column: nr, scope: columns-check }',
    'record:',
    '  isActive: { value: true }',
    '  surname: { column: naam, required: true }',
    '  preferredCommunicationLanguage: { value: nl-NL }',
    '  countryCode: { value: NL }',
    `  firstName: { column: ${firstName} }`,
    ...(birth ? [`  dateOfBirth: { column: ${birth} }`] : []),
    '',
  ].join('\n');

let dir: string;
beforeAll(() => {
  dir = tempDir('stagecoach-columns-check-');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A pipeline of one source of `format` in its own folder; returns its file. */
async function pipelineOf(format: SourceFormat, mappingText: string): Promise<string> {
  const sample = SAMPLES[format];
  const at = join(dir, format);
  mkdirSync(join(at, 'data'), { recursive: true });
  await sample.write(join(at, 'data', sample.file));
  writeFileSync(join(at, 'mapping.yaml'), mappingText);
  const file = join(at, 'pipeline.yaml');
  writeFileSync(file, onePeopleSourcePipeline({ name: `columns-${format}`, format, path: `data/${sample.file}`, options: sample.options }));
  return file;
}

describe('the early column check, every registered format', () => {
  for (const format of Object.keys(SOURCE_FORMATS) as SourceFormat[]) {
    const sample = SAMPLES[format];
    it(`${format}: a mapping reading only the file's columns passes`, async () => {
      const def = await loadPipeline(await pipelineOf(format, mapping('plaats', undefined)));
      await expect(checkConfiguration(def)).resolves.toBeUndefined();
    });

    const refusal = sample.refusal;
    if (refusal)
      it(`${format}: columns the file lacks end the check at the mapping line that reads the first, naming where the columns are`, async () => {
        const file = await pipelineOf(format, mapping('woonplaats', 'geboortedatum'));
        const at = join(dir, format);
        const expected = refusal({
          pipeline: displayPath(file),
          mapping: displayPath(join(at, 'mapping.yaml')),
          data: displayPath(join(at, 'data', sample.file)),
        });
        const err = await checkConfiguration(await loadPipeline(file)).then(
          () => undefined,
          (e: StagecoachError) => e,
        );
        expect(err?.code).toBe('CONFIG_INVALID');
        expect(err?.message).toBe(expected);
        expect(SOURCE_FORMATS[format].missingColumns).not.toBeNull();
      });
    else
      it(`${format}: says it cannot tell before reading (missingColumns null), so the check passes and the reader decides`, async () => {
        expect(SOURCE_FORMATS[format].missingColumns).toBeNull();
        const def = await loadPipeline(await pipelineOf(format, mapping('woonplaats', 'geboortedatum')));
        await expect(checkConfiguration(def)).resolves.toBeUndefined();
      });
  }
});
