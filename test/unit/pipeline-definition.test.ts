import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { loadPipeline } from '../../src/pipeline/definition/load-pipeline.js';
import { readPipeline } from '../../src/pipeline/read-pipeline.js';
import type { StagecoachError } from '../../src/contract/errors.js';
import { FORMATS } from '../../src/pipeline/definition/schema.js';

const ROOT = join(import.meta.dirname, '..', '..');
let dir: string;
let shown: string; // how the loader shows paths in dir (relative to the working folder)

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pipeline-definition-'));
  shown = relative(process.cwd(), dir);
  if (shown.startsWith('..')) shown = dir;
  cpSync(join(ROOT, 'mappings', 'counterparties'), join(dir, 'mappings'), { recursive: true });
  writeFileSync(join(dir, 'k.csv'), 'klantnr\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
}

async function loadError(file: string): Promise<StagecoachError> {
  try {
    await loadPipeline(file);
  } catch (err) {
    return err as StagecoachError;
  }
  throw new Error('expected the pipeline to be refused');
}

describe('pipeline definition', () => {
  it('loads the sample pipeline with its defaults and validated mappings', async () => {
    const def = await loadPipeline(join(ROOT, 'pipelines', 'crm.yaml'));
    expect(def.name).toBe('crm');
    expect(def.component).toBe('Counterparties');
    expect(def.sources.map((s) => [s.name, s.format, s.encoding, s.mappingFile.spec.type])).toEqual([
      ['klanten', 'csv', 'windows-1252', 'person'],
      ['bedrijven', 'json', 'utf-8', 'organisation'],
    ]);
    expect(def.sources[0]!.csv).toEqual({ delimiter: ';', quote: '"', header: true });
    expect(def.checks).toEqual({ missingRelationTarget: 'reject' });
    expect(def.target).toEqual({ migration: 'current', referenceNamespace: '3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f' });
  });

  it('applies the declared defaults to a minimal pipeline', async () => {
    const def = await loadPipeline(
      write(
        'minimal.yaml',
        'name: m\nlanguage: 2\nsources:\n  - { name: k, format: csv, path: k.csv, mapping: mappings/crm-persons.yaml }\ntarget: { referenceNamespace: 3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f }\n',
      ),
    );
    expect(def.batching).toEqual({ records: 1000, bytes: 4 * 1024 * 1024 });
    expect(def.concurrency).toEqual({ inFlight: 4, workers: 'auto' });
    expect(def.sources[0]!.encoding).toBe('auto');
    expect(def.sources[0]!.csv).toEqual({ delimiter: ',', quote: '"', header: true });
  });

  it('names file, line and column of every problem and says what was expected', async () => {
    const file = write(
      'bad.yaml',
      [
        'name: bad',
        'sources:',
        '  - name: klanten',
        '    format: xml',
        '    path: k.csv',
        '    mapping: mappings/crm-persons.yaml',
        "    csv: { delimiter: ';;', quoute: '\"' }",
        'target:',
        '  referenceNamespace: not-a-uuid',
        '',
      ].join('\n'),
    );
    const err = await loadError(file);
    expect(err.code).toBe('CONFIG_INVALID');
    const f = join(shown, 'bad.yaml');
    expect(err.message).toBe(
      [
        `Invalid ${f}: 4 problems`,
        `  ${f}:4:13: sources[0].format: expected one of ${FORMATS.map((x) => `"${x}"`).join(' | ')}, got "xml"`,
        `  ${f}:7:23: sources[0].csv.delimiter: expected a single character (delimiter), got ";;"`,
        `  ${f}:7:29: sources[0].csv: unknown option "quoute"; did you mean "quote"?`,
        `  ${f}:9:23: target.referenceNamespace: expected a UUID, got "not-a-uuid"`,
      ].join('\n'),
    );
    expect(err.context).toMatchObject({ file: f, line: 4, column: 13 });
  });

  it("checks each source's options as its format declares them, and refuses another format's options set on it", async () => {
    const ns = 'target: { referenceNamespace: 3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f }';
    const m = 'mapping: mappings/crm-persons.yaml';
    const err = await loadError(
      write(
        'options.yaml',
        [
          'name: x',
          'sources:',
          `  - { name: a, format: csv, path: k.csv, csv: { header: false }, ${m} }`,
          `  - { name: b, format: fixed-width, path: k.csv, ${m} }`,
          `  - { name: c, format: csv, path: k.csv, xlsx: { sheet: Klanten }, ${m} }`,
          `  - { name: d, format: jsonl, path: k.csv, json: { path: export.klanten }, ${m} }`,
          `  - { name: e, format: xlsx, path: k.csv, fixedWidth: { columns: [{ name: nr, start: 1, length: 4 }] }, ${m} }`,
          ns,
          '',
        ].join('\n'),
      ),
    );
    const f = join(shown, 'options.yaml');
    expect(err.message).toBe(
      [
        `Invalid ${f}: 5 problems`,
        `  ${f}:3:47: sources[0].csv: csv.header is false, so csv.columns must name the columns, got {"header":false}`,
        `  ${f}:4:5: sources[1].fixedWidth: format fixed-width needs fixedWidth.columns (name, start, length of each column), got nothing`,
        `  ${f}:5:57: sources[2].xlsx.sheet: xlsx.sheet applies to format xlsx only, expected none on a source of format csv, got "Klanten"`,
        `  ${f}:6:58: sources[3].json.path: json.path applies to format json only, expected none on a source of format jsonl, got "export.klanten"`,
        `  ${f}:7:55: sources[4].fixedWidth: fixedWidth applies to format fixed-width only, expected none on a source of format xlsx, got {"columns":[{"name":"nr","start":1,"length":4}]}`,
      ].join('\n'),
    );
  });

  it('points at the map that lacks a required option', async () => {
    const err = await loadError(
      write(
        'no-target.yaml',
        'name: x\nlanguage: 2\nsources:\n  - { name: k, format: csv, path: k.csv, mapping: mappings/crm-persons.yaml }\n',
      ),
    );
    expect(err.message).toBe(
      `Invalid ${join(shown, 'no-target.yaml')}: ${join(shown, 'no-target.yaml')}:1:1: target: missing, expected object`,
    );
  });

  it('reports YAML syntax errors with their position', async () => {
    const err = await loadError(write('syntax.yaml', 'name: x\nsources: [\n  - a\n'));
    const f = join(shown, 'syntax.yaml');
    expect(err.message).toBe(
      [
        `Invalid ${f}: 2 problems`,
        `  ${f}:3:3: YAML syntax error: Block collections are not allowed within flow collections`,
        `  ${f}:4:1: YAML syntax error: Flow sequence in block collection must be sufficiently indented and end with a ]`,
      ].join('\n'),
    );
  });

  it('refuses duplicate source names and a mapping file that does not exist', async () => {
    const ns = 'target: { referenceNamespace: 3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f }';
    const err = await loadError(
      write(
        'dupe.yaml',
        `name: x\nsources:\n  - { name: k, format: csv, path: k.csv, mapping: nowhere.yaml }\n  - { name: k, format: csv, path: k.csv, mapping: mappings/crm-persons.yaml }\n${ns}\n`,
      ),
    );
    const f = join(shown, 'dupe.yaml');
    expect(err.message).toBe(
      [
        `Invalid ${f}: 2 problems`,
        `  ${f}:3:51: sources[0].mapping: mapping file not found: "nowhere.yaml" (relative to the pipeline file)`,
        `  ${f}:4:13: sources[1].name: duplicate source name "k", expected names unique in the pipeline`,
      ].join('\n'),
    );
  });

  it('checks mapping files too: unknown options, code tables and date formats at their line', async () => {
    const mapping = [
      'type: person',
      'key: { column: klantnr, scope: k }',
      'record:',
      '  surname: { column: achternaam, transforms: [trim] }',
      '  sex: { column: geslacht, transforms: [{ code: sexe }] }',
      '  dateOfBirth: { column: geboortedatum, transforms: [{ date: dd-mm-yy }] }',
      '  relations:',
      '    - object:',
      '        type: { vaule: x }',
      'codes: { geslacht: { M: male } }',
      '',
    ].join('\n');
    write('mappings/bad-mapping.yaml', mapping);
    const pipeline = write(
      'uses-bad-mapping.yaml',
      'name: x\nlanguage: 2\nsources:\n  - { name: k, format: csv, path: k.csv, mapping: mappings/bad-mapping.yaml }\ntarget: { referenceNamespace: 3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f }\n',
    );
    const m = join(shown, 'mappings', 'bad-mapping.yaml');
    expect((await loadError(pipeline)).message).toBe(
      `Invalid ${m}: ${m}:9:17: record.relations[0].object.type: unknown option "vaule"; did you mean "value"?`,
    );
    write('mappings/bad-mapping.yaml', mapping.replace('vaule', 'value'));
    expect((await loadError(pipeline)).message).toBe(
      [
        `Invalid ${m}: 2 problems`,
        `  ${m}:5:41: record.sex.transforms[0]: unknown code table "sexe"; the mapping's codes: declares "geslacht"`,
        `  ${m}:6:54: record.dateOfBirth.transforms[0]: date format "dd-mm-yy" has a two-digit year: say which century with pivot (e.g. { date: { formats: [dd-mm-yy], pivot: 30 } } reads 29 as 2029 and 30 as 1930)`,
      ].join('\n'),
    );
  });

  it('refuses record fields that staging would drop, at their line, in nested objects and lists too', async () => {
    const mapping = [
      'type: person',
      'key: { column: klantnr, scope: k }',
      'record:',
      '  surname: achternaam',
      '  initials: voorletters',
      '  emailAdres: email', // misspelt: staging knows emailAddress
      '  addresses:',
      '    - object:',
      '        referenceId: { referenceId: { suffix: main } }',
      '        postcode: pc', // addresses take postalCode
      '  income:',
      '    object: { amount: bedrag, currency: { value: EUR }, frequency: { value: yearly } }',
      '  ratings:',
      '    - object: { agency: { value: x }, anything: { value: y } }', // ratings take any fields
      '',
    ].join('\n');
    write('mappings/misspelt.yaml', mapping);
    const pipeline = write(
      'uses-misspelt.yaml',
      'name: x\nlanguage: 2\nsources:\n  - { name: k, format: csv, path: k.csv, mapping: mappings/misspelt.yaml }\ntarget: { referenceNamespace: 3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f }\n',
    );
    const m = join(shown, 'mappings', 'misspelt.yaml');
    const message = (await loadError(pipeline)).message;
    expect(message).toMatch(new RegExp(`^Invalid ${m.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: 2 problems\n`));
    expect(message).toContain(
      `${m}:6:15: record.emailAdres: a staged person has no field "emailAdres": staging would drop it; expected one of referenceId, isActive,`,
    );
    expect(message).toContain(
      `${m}:10:19: record.addresses[0].object.postcode: addresses (an object) has no field "postcode": staging would drop it; expected one of referenceId, type, addressLine1, addressLine2, houseNumber, postalCode, locality, countryCode`,
    );
    // Fixed, it loads; and an organisation's fields are an organisation's.
    write('mappings/misspelt.yaml', mapping.replace('emailAdres', 'emailAddress').replace('postcode: pc', 'postalCode: pc'));
    await expect(loadPipeline(pipeline)).resolves.toMatchObject({ name: 'x' });
    write(
      'mappings/misspelt.yaml',
      'type: organisation\nkey: { column: kvk, scope: b }\nrecord:\n  organisationName: naam\n  cocNumber: kvk\n  surname: naam\n',
    );
    expect((await loadError(pipeline)).message).toContain(`${m}:6:12: record.surname: a staged organisation has no field "surname"`);
  });

  it('accepts the components still to come but reading them says they are not implemented yet', async () => {
    const def = await loadPipeline(
      write(
        'collaterals.yaml',
        'name: c\nlanguage: 2\ncomponent: Collaterals\nsources:\n  - { name: k, format: csv, path: k.csv, mapping: mappings/crm-persons.yaml }\ntarget: { referenceNamespace: 3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f }\n',
      ),
    );
    expect(def.component).toBe('Collaterals');
    await expect(readPipeline(def).next()).rejects.toThrow(
      `${join(shown, 'collaterals.yaml')}: component Collaterals is not implemented yet; only Counterparties pipelines can be read (the format accepts Collaterals so the file can be written now)`,
    );
  });
});
