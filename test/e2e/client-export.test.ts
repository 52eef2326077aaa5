/**
 * Counterparty export to a file, against the embedded service: every format, continuing an
 * interrupted export after its last complete record (a record cut short by a crash is cut
 * off first), and refusing to append to a file that is not an export.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient, type StagecoachClient } from '../../src/client/index.js';
import { exportCounterparties, type ExportFormat } from '../../src/client/export-counterparties.js';
import { encodeFrame } from '../../src/codec/index.js';
import { startTestService, tempDir, DEMO, type TestService } from '../support/service.js';

let svc: TestService;
let client: StagecoachClient;
let dir: string;

beforeAll(async () => {
  svc = await startTestService();
  client = createClient({
    baseUrl: svc.url,
    clientId: DEMO.clientId,
    clientSecret: DEMO.secret,
    brokerKey: DEMO.broker,
    labelReferenceId: DEMO.label,
  });
  dir = tempDir('stagecoach-export-');
  // More live counterparties than the demo seed: stage and import a batch, one with a comma and a quote.
  const m = await client.migrations.create(['Counterparties']);
  const body = Array.from({ length: 40 }, (_, i) =>
    encodeFrame('jsonl', {
      referenceId: `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
      type: 'person',
      initials: 'E.',
      surname: i === 0 ? 'O"Brien, Jr' : `Export${i + 1}`,
    }),
  ).join('');
  await client.migrations.stageCounterparties(m.referenceId, body, { format: 'jsonl' });
  await client.jobs.waitFor(await client.jobs.validateStaging(m.referenceId), { deadlineMs: 30_000 });
  await client.jobs.waitFor(await client.jobs.import(m.referenceId), { deadlineMs: 30_000 });
});
afterAll(async () => {
  await client.close();
  await svc.dispose();
});

describe('counterparty export', () => {
  for (const format of ['jsonl', 'json-seq', 'csv'] as ExportFormat[]) {
    it(`writes every counterparty as ${format}, and continues after a crash that cut the last record`, async () => {
      const full = join(dir, `full.${format}`);
      const report = await exportCounterparties(client, { format, out: full });
      const whole = readFileSync(full);
      expect(report.written).toBeGreaterThanOrEqual(45);
      expect(report.resumedAfter).toBeUndefined();

      // Simulate a crash: the file ends in the middle of a record two thirds of the way in.
      const partial = join(dir, `partial.${format}`);
      writeFileSync(partial, whole);
      const lines = whole.toString('utf8').split('\n');
      const keep = lines.slice(0, Math.floor(lines.length * 0.66)).join('\n').length + 1 + 7;
      truncateSync(partial, keep);
      const resumed = await exportCounterparties(client, { format, out: partial });
      expect(readFileSync(partial).equals(whole)).toBe(true);
      expect(resumed.repairedBytes).toBe(7);
      expect(resumed.resumedAfter).toBeGreaterThan(1);
      expect(resumed.lastSequenceNumber).toBe(report.lastSequenceNumber);

      // A complete file: nothing more to write.
      const again = await exportCounterparties(client, { format, out: partial });
      expect([again.written, again.repairedBytes, again.resumedAfter]).toEqual([0, 0, report.lastSequenceNumber]);
      expect(readFileSync(partial).equals(whole)).toBe(true);
    });
  }

  it('quotes CSV fields with commas and quotes, nested arrays joined', async () => {
    const out = join(dir, 'quoted.csv');
    await exportCounterparties(client, { format: 'csv', out });
    const text = readFileSync(out, 'utf8');
    expect(text.split('\n')[0]).toBe(
      'sequenceNumber,referenceId,type,lifecycleStatus,countryCode,preferredCommunicationLanguage,organisationName,cocNumber,countryOfIncorporation,salutation,initials,firstName,surnamePrefix,surname,sex,dateOfBirth,nationalities,emailAddress',
    );
    expect(text).toContain(',E.,,,"O""Brien, Jr",');
  });

  it('refuses to continue a file that is not an export, and starts over with fresh', async () => {
    const out = join(dir, 'notes.jsonl');
    writeFileSync(out, 'my notes\n');
    await expect(exportCounterparties(client, { format: 'jsonl', out })).rejects.toThrow(
      `${out} exists but is not an export of counterparties (it does not start with a record); choose another --out, or --fresh to start over`,
    );
    expect(readFileSync(out, 'utf8')).toBe('my notes\n');
    const report = await exportCounterparties(client, { format: 'jsonl', out, fresh: true });
    expect(readFileSync(out, 'utf8').split('\n').filter(Boolean).length).toBe(report.written);
  });

  it('refuses to append json-seq to a JSON Lines export', async () => {
    const out = join(dir, 'mixed.jsonl');
    await exportCounterparties(client, { format: 'jsonl', out });
    await expect(exportCounterparties(client, { format: 'json-seq', out })).rejects.toThrow(
      `${out} exists but is not a json-seq export (it does not start with RS); choose its format, another --out, or --fresh to start over`,
    );
  });
});
