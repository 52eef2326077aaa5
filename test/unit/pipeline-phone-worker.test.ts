/**
 * The phone worker (parallel/phone-worker.ts): a read that parses its phone numbers on the
 * worker, a batch ahead, stages and refuses exactly what a read that parses them as it maps
 * does, on an export with numbers of many countries in many notations, invalid ones among them.
 * Runs against the built code (dist), because the worker is the compiled phone-thread.js.
 */
import { describe, expect, it, beforeAll } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CountryCode, getCountryCallingCode, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { loadPipeline, readPipeline } from '../../dist/src/pipeline/read-pipeline.js';
import { generateCrmSamples, Rng } from '../../dist/src/pipeline/samples/generate-crm.js';
import type { FrontRow } from '../../dist/src/pipeline/types.js';

const PERSONS = 3000;
const REGIONS: CountryCode[] = ['NL', 'BE', 'DE', 'GB', 'IE', 'FR', 'US', 'IT', 'ES', 'CH'];

/** A valid number of `region` made of random digits (libphonenumber's validity is the judge), in E.164. */
function validNumber(rng: Rng, region: CountryCode): string {
  const cc = getCountryCallingCode(region);
  for (;;) {
    let nsn = String(rng.int(1, 9));
    const length = rng.int(8, 10);
    while (nsn.length < length) nsn += String(rng.int(0, 9));
    const n = parsePhoneNumberFromString(`+${cc}${nsn}`);
    if (n?.isValid() && n.country === region) return n.number;
  }
}

/** A phone cell and a region cell: a number in one of its notations, or one of the defects exports hold. */
function phoneCells(rng: Rng): [phone: string, region: string] {
  const region = REGIONS[rng.int(0, REGIONS.length - 1)]!;
  const n = parsePhoneNumberFromString(validNumber(rng, region))!;
  const national = n.formatNational();
  const international = n.formatInternational();
  switch (rng.int(0, 13)) {
    case 0:
      return [international, ''];
    case 1:
      return [`00${international.slice(1).replace(/ /g, '')}`, ''];
    case 2:
      return [international.replace(' ', ' (0)'), region];
    case 3:
      return [national, '']; // a national number, no region in the row
    case 4:
      return [national, 'Atlantis']; // a region no country resolver knows
    case 5:
      return [national.slice(0, -3), region]; // digits lost: too short
    case 6:
      return [`${national} ext 12`, region];
    case 7:
      return ['bel me', region];
    case 8:
      return [national, region === 'GB' ? 'DE' : 'GB']; // the wrong region
    case 9:
      return [` ${national.replace(/[\s()-]/g, '')} `, region.toLowerCase()];
    default:
      return [national, region];
  }
}

const TELEPHONES = `  telephoneNumbers:
    - object:
        type: { value: home }
        number: { column: telefoon, transforms: [{ phone: { regionColumn: regio, region: NL } }] }
    - object:
        type: { value: mobile }
        number: { column: telefoon, transforms: [trim, { phone: { regionColumn: regio } }] }
    - object:
        type: { value: work }
        number: { column: telefoon, transforms: [phone] }
    - object:
        type: { value: other }
        number: { column: telefoon, transforms: [{ phone: { region: GB, check: possible } }] }
`;

let dir: string;
/** Data rows of the export (the generator plants a few defects besides the persons). */
let rowCount: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'stagecoach-phone-worker-'));
  await generateCrmSamples({ out: dir, persons: PERSONS, organisations: 0, seed: 29, defectsPer10k: 5 });
  // The export's own numbers give way to numbers of many countries, with a region column of their own.
  const rng = new Rng(2929);
  const lines = readFileSync(join(dir, 'klanten.csv'), 'utf8').split('\r\n');
  rowCount = lines.filter((l) => l !== '').length - 1;
  const header = lines[0]!.split(';');
  const phoneAt = header.indexOf('telefoon');
  const out = lines.map((line, i) => {
    if (line === '') return line;
    if (i === 0) return `${line};regio`;
    const cells = line.split(';');
    const [phone, region] = phoneCells(rng);
    cells[phoneAt] = phone;
    return `${cells.join(';')};${region}`;
  });
  writeFileSync(join(dir, 'klanten.csv'), out.join('\r\n'));
  const mappingFile = join(dir, 'mappings', 'crm-persons.yaml');
  const mapping = readFileSync(mappingFile, 'utf8');
  const replaced = mapping.replace(/ {2}telephoneNumbers:\n[\s\S]*?(?= {2}addresses:)/, TELEPHONES);
  if (replaced === mapping) throw new Error('the generated persons mapping has no telephoneNumbers block to replace');
  writeFileSync(mappingFile, replaced);
  // The same pipeline without a phone step: the number staged as written.
  writeFileSync(join(dir, 'mappings', 'no-phone.yaml'), mapping.replace(/\{ phone: \{[^}]*\} \}/, 'trim'));
  writeFileSync(join(dir, 'no-phone.yaml'), readFileSync(join(dir, 'pipeline.yaml'), 'utf8').replace('crm-persons.yaml', 'no-phone.yaml'));
});

async function collect(rows: AsyncIterable<FrontRow>): Promise<FrontRow[]> {
  const out: FrontRow[] = [];
  for await (const r of rows) out.push(r);
  return out;
}

/** A thread that dies at its first job, as a worker whose thread fails would. */
const dyingThread = new URL('../support/dying-phone-thread.mjs', import.meta.url);

describe('phone worker', () => {
  it('stages and refuses exactly what parsing on this thread does, numbers of ten countries and their defects', async () => {
    const def = await loadPipeline(join(dir, 'pipeline.yaml'));
    const here = await collect(readPipeline(def, { phoneWorker: false }));
    const ahead = await collect(readPipeline(def));
    expect(ahead.length).toBe(rowCount);
    expect(ahead).toEqual(here);

    // The comparison holds both kinds: numbers staged, of every region, and numbers refused, with their messages.
    const staged = ahead.flatMap((r) =>
      r.kind === 'mapped' ? ((r.record as { telephoneNumbers?: { number: string }[] }).telephoneNumbers ?? []).map((t) => t.number) : [],
    );
    const countries = new Set(staged.map((n) => parsePhoneNumberFromString(n)?.country));
    expect([...countries].sort()).toEqual([...REGIONS].sort());
    const messages = ahead.flatMap((r) => (r.kind === 'rejected' ? r.reasons.map((x) => x.message.replace(/, got .*/, '')) : []));
    const phoneMessages = new Set(messages.filter((m) => m.startsWith('telephoneNumbers')));
    for (const expected of [
      'telephoneNumbers[0].number: the region column regio holds `Atlantis`, which is no country with a numbering plan',
      'telephoneNumbers[1].number: a national phone number, but no region is known: column regio is empty and the mapping declares no region ({ phone: { regionColumn: regio, region: NL } })',
      'telephoneNumbers[2].number: a national phone number, but no region is known: declare one ({ phone: { region: NL } }) or read it from a column (regionColumn)',
      'telephoneNumbers[0].number: a phone number with an extension, which E.164 cannot hold; expected the number alone',
      'telephoneNumbers[0].number: not a phone number, expected a number of region GB or an international one',
      'telephoneNumbers[0].number: not a valid phone number for region DE',
      'telephoneNumbers[3].number: not a possible phone number for region GB (its length)',
    ])
      expect(phoneMessages).toContain(expected);
  });

  it('fails the read, saying so, when its thread dies', async () => {
    const def = await loadPipeline(join(dir, 'pipeline.yaml'));
    await expect(collect(readPipeline(def, { phoneWorker: { threadUrl: dyingThread } }))).rejects.toThrow('the phone worker exited with 3');
  });

  it('starts no thread for a pipeline without a phone step', async () => {
    const def = await loadPipeline(join(dir, 'no-phone.yaml'));
    // With a thread that dies at once, the read would fail had it started one.
    const rows = await collect(readPipeline(def, { phoneWorker: { threadUrl: dyingThread } }));
    expect(rows.length).toBe(rowCount);
    expect(rows).toEqual(await collect(readPipeline(def, { phoneWorker: false })));
  });
});
