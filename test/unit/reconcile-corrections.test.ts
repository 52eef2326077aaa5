import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { csvField, writeCorrections } from '../../src/reconcile/corrections.js';

const dir = mkdtempSync(join(tmpdir(), 'stagecoach-corr-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('corrections file', () => {
  it('writes no file for a source whose legacy file cannot be read back, says why, and writes the others', async () => {
    const csv = 'klantnr;achternaam\n2001;\n';
    writeFileSync(join(dir, 'here.csv'), csv);
    const out = join(dir, 'out-unreadable');
    // A file an earlier report left where the unreadable source's would go: not left beside the new report.
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'gone.corrections.csv'), 'stale');
    const refused = (source: string, file: string, line: number) => ({
      source,
      provenance: { file, line, byteOffset: source === 'here' ? csv.indexOf('2001') : 0 },
      errors: [{ field: 'surname', code: 'MISSING_REQUIRED_FIELD', message: 'surname is required', stage: 'mapping' as const }],
    });
    const files = await writeCorrections(
      [refused('gone', 'gone.csv', 2), refused('here', 'here.csv', 2), refused('gone', 'gone.csv', 3)],
      [
        { name: 'gone', format: 'csv', encoding: 'auto', csv: { delimiter: ';' } },
        { name: 'here', format: 'csv', encoding: 'auto', csv: { delimiter: ';' } },
      ],
      out,
      dir,
    );
    expect(files).toEqual([
      { source: 'here', file: join(out, 'here.corrections.csv'), rows: 1 },
      { source: 'gone', file: join(out, 'gone.corrections.csv'), rows: 2, unreadable: `Cannot read ${join(dir, 'gone.csv')}: ENOENT` },
    ]);
    expect(existsSync(join(out, 'gone.corrections.csv'))).toBe(false);
    expect(readFileSync(join(out, 'here.corrections.csv'), 'utf8')).toContain('\r\nhere;here.csv:2;2001;;;surname;MISSING_REQUIRED_FIELD;');
  });

  it('holds the refused rows in their original columns with the error columns added, one file per source, named by _source', async () => {
    const csv = 'klantnr;voorletters;achternaam;land\n1001;J.;Jansen;NL\n1002;;"de Vries; jr";NL\n1003;P.;Bakker;XX\n';
    writeFileSync(join(dir, 'persons.csv'), csv);
    const json = '[\n{"kvk":"1","naam":"Acme","adres":{"plaats":"Delft"}},\n{"kvk":"","naam":"Nameless"}\n]\n';
    writeFileSync(join(dir, 'orgs.json'), json);
    const out = join(dir, 'out');
    const files = await writeCorrections(
      [
        {
          source: 'persons',
          provenance: { file: 'persons.csv', line: 3, byteOffset: csv.indexOf('1002') },
          errors: [{ field: 'initials', code: 'MISSING_REQUIRED_FIELD', message: 'initials is required', stage: 'mapping' }],
        },
        {
          source: 'organisations',
          provenance: { file: 'orgs.json', line: 3, byteOffset: json.indexOf('{"kvk":""') },
          errors: [{ field: 'cocNumber', code: 'MISSING_REQUIRED_FIELD', message: 'cocNumber is required', stage: 'staging' }],
        },
        {
          source: 'persons',
          provenance: { file: 'persons.csv', line: 4, byteOffset: csv.indexOf('1003') },
          errors: [
            { field: 'countryCode', code: 'UNKNOWN_CODE', message: 'XX is not a configured country', stage: 'validation' },
            { field: 'nationalities.0', code: 'UNKNOWN_CODE', message: 'XX is not a configured nationality', stage: 'validation' },
          ],
        },
      ],
      [
        { name: 'persons', format: 'csv', encoding: 'auto', csv: { delimiter: ';' } },
        { name: 'organisations', format: 'json', encoding: 'auto' },
      ],
      out,
      dir,
    );
    expect(files).toEqual([
      { source: 'persons', file: join(out, 'persons.corrections.csv'), rows: 2 },
      { source: 'organisations', file: join(out, 'organisations.corrections.jsonl'), rows: 1 },
    ]);
    const persons = readFileSync(join(out, 'persons.corrections.csv'), 'utf8').split('\r\n');
    expect(persons[0]).toBe(
      '\uFEFF_source;_origin;klantnr;voorletters;achternaam;land;_extra;error_field;error_code;error_message;error_stage;_row_hash',
    );
    expect(persons[1]).toMatch(
      /^persons;persons\.csv:3;1002;;"de Vries; jr";NL;;initials;MISSING_REQUIRED_FIELD;initials is required — fill in the value;mapping;[0-9a-f]{16}$/,
    );
    expect(persons[2]).toMatch(
      /^persons;persons\.csv:4;1003;P\.;Bakker;XX;;countryCode \| nationalities\.0;UNKNOWN_CODE \| UNKNOWN_CODE;XX is not a configured country — correct the value \| XX is not a configured nationality — correct the value;validation \| validation;[0-9a-f]{16}$/,
    );
    expect(persons.slice(3)).toEqual(['']);
    const orgs = JSON.parse(readFileSync(join(out, 'organisations.corrections.jsonl'), 'utf8')) as Record<string, unknown>;
    expect(orgs).toEqual({
      _source: 'organisations',
      _origin: 'orgs.json:3',
      kvk: '',
      naam: 'Nameless',
      error_field: 'cocNumber',
      error_code: 'MISSING_REQUIRED_FIELD',
      error_message: 'cocNumber is required — fill in the value',
      error_stage: 'staging',
      _row_hash: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    // written owner-only: the rows are personal data
    expect(statSync(join(out, 'persons.corrections.csv')).mode & 0o777).toBe(0o600);
  });

  it('quotes a field only when the delimiter, a quote, a line break or edge blanks need it', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(' padded')).toBe('" padded"');
    expect(csvField('a;b', ';')).toBe('"a;b"');
  });

  it('keeps the error columns in place for a row refused for its number of cells, what did not fit in _extra', async () => {
    const csv = 'nr,naam\n1,Jansen,extra,more\n2\n';
    writeFileSync(join(dir, 'width.csv'), csv);
    const refused = (line: number, at: number) => ({
      source: 'p',
      provenance: { file: 'width.csv', line, byteOffset: at },
      errors: [{ field: '', code: 'SOURCE_ROW_INVALID', message: 'wrong number of cells', stage: 'source' }],
    });
    const out = join(dir, 'width');
    await writeCorrections(
      [refused(2, csv.indexOf('1,')), refused(3, csv.indexOf('2\n'))],
      [{ name: 'p', format: 'csv', encoding: 'auto', csv: { delimiter: ',' } }],
      out,
      dir,
    );
    const lines = readFileSync(join(out, 'p.corrections.csv'), 'utf8').split('\r\n');
    expect(lines[0]).toBe('\uFEFF_origin,nr,naam,_extra,error_field,error_code,error_message,error_stage,_row_hash');
    expect(lines[1]).toMatch(
      /^width\.csv:2,1,Jansen,"extra,more",,SOURCE_ROW_INVALID,wrong number of cells — make the row hold exactly the columns of the header,source,[0-9a-f]{16}$/,
    );
    expect(lines[2]).toMatch(/^width\.csv:3,2,,1 of 2 cells: 1 missing,,SOURCE_ROW_INVALID,/);
  });
});
