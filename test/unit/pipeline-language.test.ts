/**
 * Pipelines keep their meaning across versions of the pipeline language: a pipeline written for
 * language 1 (stating none) whose mappings hold a phone step without region or check, a number
 * step without separators, or two date formats that read a value differently, is refused at
 * load time with every place at file:line and its fix (no row read); `upgrade` rewrites those
 * places (comments and layout kept) so the pipeline reads its rows as language 1 did.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { loadPipeline } from '../../src/pipeline/definition/load-pipeline.js';
import { upgradePipeline } from '../../src/pipeline/definition/upgrade.js';
import { LANGUAGE_VERSION } from '../../src/pipeline/definition/language.js';
import { readPipeline } from '../../src/pipeline/read-pipeline.js';
import type { StagecoachError } from '../../src/contract/errors.js';

const ROOT = join(import.meta.dirname, '..', '..');
const NS = 'target: { referenceNamespace: 3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f }';

/** A person mapping as language 1 wrote it: every construct whose meaning changed in language 2. */
const OLD_MAPPING = `# persons of the old CRM
type: person
key: { column: id, scope: p }
record:
  initials: { column: voorletters, required: true }
  surname: { column: naam, required: true }   # the family name
  dateOfBirth: { column: geboren, transforms: [{ date: [dd/mm/yyyy, mm/dd/yyyy] }] }
  telephoneNumbers:
    - object:
        type: { value: home }
        number: { column: tel, transforms: [trim, phone] }   # Dutch numbers
  income:
    when: { column: inkomen, notEmpty: true }
    object:
      amount: { column: inkomen, transforms: [{ number: {} }] }
      currency: { value: EUR }
      frequency: { value: monthly }
`;

const ROWS = 'id;voorletters;naam;geboren;tel;inkomen\n1;J.;Jansen;05/02/1980;06-12345678;1.234,50\n2;P.;Smit;02/13/1970;020 123 4567;\n';

let dir: string;
let shown: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pipeline-language-'));
  shown = relative(process.cwd(), dir);
  if (shown.startsWith('..')) shown = dir;
  writeFileSync(join(dir, 'p.csv'), ROWS);
  writeFileSync(join(dir, 'persons.yaml'), OLD_MAPPING);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function pipeline(language: string): string {
  const file = join(dir, 'old.yaml');
  writeFileSync(
    file,
    `# an old pipeline\n${language}name: old\nsources:\n  - { name: p, format: csv, path: p.csv, csv: { delimiter: ';', quotes: relaxed }, mapping: persons.yaml }\n${NS}\n`,
  );
  return file;
}

async function refusal(p: Promise<unknown>): Promise<StagecoachError> {
  try {
    await p;
  } catch (err) {
    return err as StagecoachError;
  }
  throw new Error('expected a refusal');
}

async function records(file: string) {
  const out: unknown[] = [];
  for await (const r of readPipeline(await loadPipeline(file))) out.push(r.kind === 'mapped' ? r.record : r.reasons);
  return out;
}

describe('pipeline language versions', () => {
  it('refuses a pipeline without language: whose mappings changed meaning, each place at its line with the fix', async () => {
    const err = await refusal(loadPipeline(pipeline('')));
    expect(err.code).toBe('CONFIG_INVALID');
    const m = join(shown, 'persons.yaml');
    expect(err.message.split('\n')).toEqual([
      `${join(shown, 'old.yaml')}: written for pipeline language 1 (it states no language:); this stagecoach reads language 2, where 4 places mean something else:`,
      `  ${m}:7:48: date formats dd/mm/yyyy, mm/dd/yyyy read some values as different dates: language 1 took the first that matched, language 2 refuses them as ambiguous; keep the first with { date: { formats: [dd/mm/yyyy, mm/dd/yyyy], prefer: dd/mm/yyyy } }`,
      `  ${m}:11:51: phone without a region: language 1 read a national number as Dutch, language 2 reads only international numbers and refuses national ones; keep the Dutch reading with { phone: { region: NL } }`,
      `  ${m}:11:51: phone without check: language 1 held a number to its length (Dutch 0 + 9 digits, others 6 to 12), language 2 to the ranges its region issues; keep a length check with { phone: { …, check: possible } } (the lengths of the region’s numbering plan), or state check: valid`,
      `  ${m}:15:47: number without decimal or thousands: language 1 read them as Dutch (decimal ",", thousands "."), language 2 refuses the mapping; state both, e.g. { number: { decimal: ',', thousands: '.' } }`,
      `\`stagecoach upgrade ${join(shown, 'old.yaml')}\` rewrites the files to language 2 keeping their meaning (CHANGELOG.md)`,
    ]);
    expect(err.context).toMatchObject({ file: m, line: 7, column: 48 });
  });

  it('reads the same text stated as language 2 with the new meanings: no load-time notice, the phone refused per row', async () => {
    const err = await refusal(loadPipeline(pipeline(`language: ${LANGUAGE_VERSION}\n`)));
    expect(err.message).toContain(
      'persons.yaml:15:57: record.income.object.amount.transforms[0].number.decimal: expected one of "," | ".", got nothing',
    );
    writeFileSync(join(dir, 'persons.yaml'), OLD_MAPPING.replace('{ number: {} }', "{ number: { decimal: ',', thousands: '.' } }"));
    const [first] = await records(pipeline(`language: ${LANGUAGE_VERSION}\n`));
    expect(first).toEqual([
      expect.objectContaining({ field: 'dateOfBirth', message: expect.stringContaining('ambiguous date') }),
      expect.objectContaining({
        field: 'telephoneNumbers[0].number',
        message: expect.stringContaining('a national phone number, but no region is known'),
      }),
    ]);
  });

  it('upgrade rewrites only the changed places, keeps comments, and the rows read as language 1 read them', async () => {
    const file = pipeline('');
    const dry = await upgradePipeline(file, { write: false });
    expect(dry.written).toBe(false);
    expect(readFileSync(join(dir, 'persons.yaml'), 'utf8')).toBe(OLD_MAPPING);
    const report = await upgradePipeline(file, { write: true });
    expect(report).toMatchObject({ from: 1, to: LANGUAGE_VERSION, written: true });
    expect(report.files.map((f) => [relative(dir, f.file), f.sites.map((s) => s.change)])).toEqual([
      ['persons.yaml', ['phone-region', 'phone-validity', 'number-separators', 'date-first-format']],
      ['old.yaml', []],
    ]);
    const mapping = readFileSync(join(dir, 'persons.yaml'), 'utf8').split('\n');
    const before = OLD_MAPPING.split('\n');
    // every line but the three changed ones as written, comments included
    expect(mapping.filter((l, i) => l !== before[i])).toEqual([
      '  dateOfBirth: { column: geboren, transforms: [{ date: { formats: [ dd/mm/yyyy, mm/dd/yyyy ], prefer: dd/mm/yyyy } }] }',
      '        number: { column: tel, transforms: [trim, { phone: { region: NL, check: possible } }] }   # Dutch numbers',
      '      amount: { column: inkomen, transforms: [{ number: { decimal: ",", thousands: . } }] }',
    ]);
    expect(readFileSync(file, 'utf8')).toBe(
      `# an old pipeline\nlanguage: 2\nname: old\nsources:\n  - { name: p, format: csv, path: p.csv, csv: { delimiter: ';', quotes: relaxed }, mapping: persons.yaml }\n${NS}\n`,
    );
    const [first, second] = (await records(file)) as Record<string, unknown>[];
    expect(first).toMatchObject({
      dateOfBirth: '1980-02-05', // dd/mm/yyyy first, as language 1 read it
      telephoneNumbers: [{ type: 'home', number: '+31612345678' }],
      income: { amount: 1234.5 },
    });
    expect(second).toMatchObject({ dateOfBirth: '1970-02-13', telephoneNumbers: [{ number: '+31201234567' }] });
    // once upgraded, nothing is left to do
    expect((await upgradePipeline(file, { write: true })).files).toEqual([]);
  });

  it('upgrade writes nothing where no statement keeps the meaning (three date formats), naming the place', async () => {
    writeFileSync(join(dir, 'persons.yaml'), OLD_MAPPING.replace('[dd/mm/yyyy, mm/dd/yyyy]', '[dd/mm/yyyy, mm/dd/yyyy, yyyy/mm/dd]'));
    const before = readFileSync(join(dir, 'persons.yaml'), 'utf8');
    const err = await refusal(upgradePipeline(pipeline(''), { write: true }));
    expect(err.message).toContain(
      `persons.yaml:7:48: date formats dd/mm/yyyy, mm/dd/yyyy, yyyy/mm/dd read some values as different dates: language 1 took the first that matched, language 2 refuses them as ambiguous; say which format wins with { date: { formats: […], prefer: … } } (by hand)`,
    );
    expect(readFileSync(join(dir, 'persons.yaml'), 'utf8')).toBe(before);
    expect(readFileSync(join(dir, 'old.yaml'), 'utf8')).not.toContain('language:');
  });

  it('loads a pipeline without language: whose meaning did not change, and refuses a later language', async () => {
    const dir2 = join(dir, 'shipped');
    cpSync(join(ROOT, 'mappings', 'counterparties'), dir2, { recursive: true });
    // A fixed-width source: CSV and JSON sources changed meaning (stray quotes, repeated keys).
    const unstated = readFileSync(join(ROOT, 'pipelines', 'core-banking.yaml'), 'utf8')
      .replace(/^language:.*\n/m, '')
      .replaceAll('../mappings/counterparties/', '')
      .replaceAll('../samples/core-banking/', `${join(ROOT, 'samples', 'core-banking')}/`);
    writeFileSync(join(dir2, 'core-banking.yaml'), unstated);
    expect((await loadPipeline(join(dir2, 'core-banking.yaml'))).name).toBe('core-banking');
    writeFileSync(join(dir2, 'later.yaml'), `language: ${LANGUAGE_VERSION + 1}\n${unstated}`);
    const err = await refusal(loadPipeline(join(dir2, 'later.yaml')));
    expect(err.message).toContain(
      `later.yaml:1:11: language: written for a later pipeline language than this stagecoach reads (${LANGUAGE_VERSION}): upgrade stagecoach, got ${LANGUAGE_VERSION + 1}`,
    );
  });
});
