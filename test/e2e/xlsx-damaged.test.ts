/**
 * A damaged workbook through the real CLI (issue 41): 40 bytes flipped inside the compressed
 * sheet made `plan` exit 13 with nothing printed, and `run` hang with the run left `running`.
 * Now both end in bounded time, exit 1, name the file and the damaged part, and the run is
 * marked failed in the ledger. A file that is no zip names itself too. Real service, real CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { workbookBytes } from '../../bench/xlsx-generated.js';
import { runCli } from '../support/cli.js';
import { onePeopleSourcePipeline } from '../support/pipeline-text.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';

const MAPPING = [
  'type: person',
  'key: { column: nr, scope: damaged-workbook }',
  'record:',
  '  isActive: { value: true }',
  '  surname: { column: naam, required: true }',
  '  preferredCommunicationLanguage: { value: nl-NL }',
  '  countryCode: { value: NL }',
  '  initials: { value: J. }',
  '',
].join('\n');

/** A workbook of 2,000 people whose compressed sheet has 40 bytes flipped in its middle. */
async function flippedWorkbook(): Promise<Buffer> {
  const rows = ['<row r="1"><c r="A1" t="inlineStr"><is><t>nr</t></is></c><c r="B1" t="inlineStr"><is><t>naam</t></is></c></row>'];
  for (let n = 2; n <= 2000; n++)
    rows.push(
      `<row r="${n}"><c r="A${n}"><v>${1000 + n}</v></c><c r="B${n}" t="inlineStr"><is><t>Naam ${(n * 7919) % 10007}</t></is></c></row>`,
    );
  const bytes = await workbookBytes({ sheetXml: `<sheetData>${rows.join('')}</sheetData>` });
  const name = Buffer.from('xl/worksheets/sheet1.xml');
  const header = bytes.indexOf(Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04])]), 0);
  let at = header;
  while (at >= 0 && !bytes.subarray(at + 30, at + 30 + name.length).equals(name))
    at = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x03, 0x04]), at + 4);
  const start = at + 30 + bytes.readUInt16LE(at + 26) + bytes.readUInt16LE(at + 28);
  const size = bytes.readUInt32LE(at + 18);
  const flipped = Buffer.from(bytes);
  for (let i = 0; i < 40; i++) flipped[start + Math.floor(size / 2) + i]! ^= 0xff;
  return flipped;
}

let svc: TestService;
let dir: string;
beforeAll(async () => {
  svc = await startTestService();
  dir = tempDir('stagecoach-xlsx-damaged-');
  mkdirSync(join(dir, 'data'));
  writeFileSync(join(dir, 'data', 'people.xlsx'), await flippedWorkbook());
  writeFileSync(join(dir, 'data', 'text.xlsx'), 'nr;naam\n1;Bos\n');
  writeFileSync(join(dir, 'mapping.yaml'), MAPPING);
  for (const [name, file] of [
    ['pipeline.yaml', 'people.xlsx'],
    ['text.yaml', 'text.xlsx'],
  ])
    writeFileSync(
      join(dir, name!),
      onePeopleSourcePipeline({ name: 'damaged', format: 'xlsx', path: `data/${file}`, options: ['xlsx: { sheet: Data }'] }),
    );
});
afterAll(async () => {
  await svc?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('a damaged workbook', () => {
  it('plan: exits 1 naming the file and the damaged part, in bounded time', async () => {
    const plan = await runCli(['plan', 'pipeline.yaml'], { cwd: dir, timeoutMs: 60_000 });
    expect(plan.signal).toBeNull(); // not killed by the timeout
    expect(plan.code, plan.stdout + plan.stderr).toBe(1);
    expect(plan.stderr).toContain('data/people.xlsx: the workbook part xl/worksheets/sheet1.xml is damaged');
  }, 90_000);

  it('run: exits 1 naming the file, and the run is marked failed in the ledger, not left running', async () => {
    const ledger = join(dir, 'ledger.db');
    const run = await runCli(['run', 'pipeline.yaml', '--ledger', ledger, '--base-url', svc.url], { cwd: dir, timeoutMs: 60_000 });
    expect(run.signal).toBeNull();
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout + run.stderr).toContain('data/people.xlsx: the workbook part xl/worksheets/sheet1.xml is damaged');
    const db = new Database(ledger, { readonly: true });
    const runs = db.prepare('SELECT status FROM runs').all() as { status: string }[];
    db.close();
    expect(runs.map((r) => r.status)).toEqual(['failed']);
  }, 90_000);

  it('a file that is no zip: the message names it', async () => {
    const plan = await runCli(['plan', 'text.yaml'], { cwd: dir, timeoutMs: 60_000 });
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain('data/text.xlsx: no zip directory at its end: not a workbook');
  }, 90_000);
});
