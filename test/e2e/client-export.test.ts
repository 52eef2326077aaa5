/**
 * Counterparty export to a file, against the embedded service: every format, continuing an
 * interrupted export after its last complete record (a record cut short by a crash is cut
 * off first), and refusing, untouched and through the real CLI with exit 2, any existing file that
 * is not a cut-off export of the same format.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient, type StagecoachClient } from '../../src/client/index.js';
import { exportCounterparties, type ExportFormat } from '../../src/client/export-counterparties.js';
import { encodeFrame } from '../../src/codec/index.js';
import { runCli } from '../support/cli.js';
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
      // A quote and a comma early on, and multi-byte characters (a cut may land inside one).
      surname: i === 0 ? 'O"Brien, Jr' : i === 1 ? 'Müller-Ŝtraße' : `Export${i + 1}`,
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
      const keep = Buffer.byteLength(lines.slice(0, Math.floor(lines.length * 0.66)).join('\n')) + 1 + 7;
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
      `${out} exists and is not a cut-off jsonl export of counterparties: it does not start as this export does (expected a JSON record \`{\`); choose another --out, or --fresh to start over`,
    );
    expect(readFileSync(out, 'utf8')).toBe('my notes\n');
    const report = await exportCounterparties(client, { format: 'jsonl', out, fresh: true });
    expect(readFileSync(out, 'utf8').split('\n').filter(Boolean).length).toBe(report.written);
  });

  it('refuses to append json-seq to a JSON Lines export', async () => {
    const out = join(dir, 'mixed.jsonl');
    await exportCounterparties(client, { format: 'jsonl', out });
    await expect(exportCounterparties(client, { format: 'json-seq', out })).rejects.toThrow(
      `${out} exists and is not a cut-off json-seq export of counterparties: it is a jsonl export (--format jsonl continues it); choose another --out, or --fresh to start over`,
    );
  });

  describe('an existing file that is not a cut-off export of the same format is refused untouched (CLI, exit 2)', () => {
    const env = () => ({ STAGECOACH_BASE_URL: svc.url });
    const exportTo = (format: ExportFormat, out: string) =>
      runCli(['counterparties', 'export', '--format', format, '--out', out], { env: env() });
    const whole = async (format: ExportFormat) => {
      const out = join(dir, `whole-${format}-${Math.random().toString(36).slice(2)}.${format}`);
      expect((await exportTo(format, out)).code).toBe(0);
      return readFileSync(out);
    };
    const lineCount = (b: Buffer) => b.toString('utf8').split('\n').length - 1;
    // Each case: the existing file, and the reason the refusal must give (exactly, or a pattern).
    const cases: { name: string; format: ExportFormat; content: () => Promise<{ bytes: Buffer; why: string | RegExp }> }[] = [
      {
        name: 'a JSON Lines export named as the --out of a csv export',
        format: 'csv',
        content: async () => ({ bytes: await whole('jsonl'), why: 'it is a jsonl export (--format jsonl continues it)' }),
      },
      {
        name: 'a CSV export named as the --out of a jsonl export',
        format: 'jsonl',
        content: async () => ({ bytes: await whole('csv'), why: 'it is a csv export (--format csv continues it)' }),
      },
      {
        name: 'a text file whose first line holds a quote',
        format: 'csv',
        content: async () => ({
          bytes: Buffer.from('he said "hi"\nand left\n'),
          why: 'it does not start as this export does (expected the header line `sequenceNumber,referenceId,…`)',
        }),
      },
      {
        name: 'a CSV export whose early line was edited to hold a stray quote',
        format: 'csv',
        content: async () => {
          const lines = (await whole('csv')).toString('utf8').split('\n');
          lines[2] = `${lines[2]} he said "hi"`;
          return { bytes: Buffer.from(lines.join('\n')), why: /^line 3 does not parse as CSV \(Invalid Opening Quote: .*\)$/ };
        },
      },
      {
        name: 'a CSV file with another header',
        format: 'csv',
        content: async () => ({
          bytes: Buffer.from('sequenceNumber,name\n1,x\n'),
          why: 'its first line is not the header this export writes (`sequenceNumber,referenceId,…,emailAddress`)',
        }),
      },
      {
        name: 'a CSV export with a line of too few fields before the last',
        format: 'csv',
        content: async () => {
          const lines = (await whole('csv')).toString('utf8').split('\n');
          lines[4] = '5,abc';
          return { bytes: Buffer.from(lines.join('\n')), why: 'line 5 has 2 fields, expected 18' };
        },
      },
      {
        name: 'a JSON Lines export with a line that is not JSON before the last',
        format: 'jsonl',
        content: async () => {
          const lines = (await whole('jsonl')).toString('utf8').split('\n');
          const byte = Buffer.byteLength(lines.slice(0, 3).join('\n')) + 1;
          lines[3] = '{ my notes';
          return {
            bytes: Buffer.from(lines.join('\n')),
            why: new RegExp(`^record 4 \\(byte ${byte}\\) is not a counterparty record \\(malformed JSON: .*\\)$`),
          };
        },
      },
      {
        name: 'JSON Lines whose records are not counterparties',
        format: 'jsonl',
        content: async () => ({
          bytes: Buffer.from('{"name":"a"}\n{"name":"b"}\n'),
          why: 'record 1 (byte 0) is not a counterparty with a sequenceNumber',
        }),
      },
      {
        name: 'a JSON Lines export with a last line that is not the start of a record',
        format: 'jsonl',
        content: async () => {
          const full = await whole('jsonl');
          return {
            bytes: Buffer.concat([full, Buffer.from('my notes')]),
            why: `record ${lineCount(full) + 1} (byte ${full.length}) is not a counterparty record (last line is incomplete JSON and has no final newline)`,
          };
        },
      },
      {
        name: 'two json-seq exports appended to each other',
        format: 'json-seq',
        content: async () => {
          const full = await whole('json-seq');
          const n = lineCount(full);
          return {
            bytes: Buffer.concat([full, full]),
            why: `record ${n + 1} (byte ${full.length + 1}) has sequenceNumber 1, not after ${n}`,
          };
        },
      },
    ];
    for (const [i, c] of cases.entries()) {
      it(c.name, async () => {
        const out = join(dir, `refused-${i}.${c.format}`);
        const { bytes, why } = await c.content();
        writeFileSync(out, bytes);
        const r = await exportTo(c.format, out);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stdout).toBe('');
        const prefix = `stagecoach: ${out} exists and is not a cut-off ${c.format} export of counterparties: `;
        const suffix = '; choose another --out, or --fresh to start over\n';
        expect(r.stderr.startsWith(prefix) && r.stderr.endsWith(suffix), r.stderr).toBe(true);
        const reason = r.stderr.slice(prefix.length, -suffix.length);
        if (typeof why === 'string') expect(reason).toBe(why);
        else expect(reason).toMatch(why);
        expect(reason).not.toContain('\n');
        expect(readFileSync(out).equals(bytes)).toBe(true);
      });
    }

    it('a folder named as --out', async () => {
      const out = join(dir, 'a-folder.jsonl');
      mkdirSync(out);
      const r = await exportTo('jsonl', out);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toBe(
        `stagecoach: ${out} exists and is not a cut-off jsonl export of counterparties: it is not a regular file; choose another --out, or --fresh to start over\n`,
      );
    });

    it('a CSV export cut inside the quoted field of an early record is continued, not emptied', async () => {
      const full = await whole('csv');
      const out = join(dir, 'cut-in-quote.csv');
      const at = full.indexOf('"O""Bri') + '"O""Bri'.length;
      writeFileSync(out, full.subarray(0, at));
      const r = await exportTo('csv', out);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/\(continued after sequenceNumber \d+; cut off \d+ bytes of a half-written record\)/);
      expect(readFileSync(out).equals(full)).toBe(true);
    });

    it('a JSON Lines export cut inside a multi-byte character is continued', async () => {
      const full = await whole('jsonl');
      const out = join(dir, 'cut-in-char.jsonl');
      writeFileSync(out, full.subarray(0, full.indexOf('Müller') + 2)); // inside the two bytes of ü
      const r = await exportTo('jsonl', out);
      expect(r.code, r.stderr).toBe(0);
      expect(readFileSync(out).equals(full)).toBe(true);
    });

    it('a CSV export cut inside its header line starts over', async () => {
      const full = await whole('csv');
      const out = join(dir, 'cut-in-header.csv');
      writeFileSync(out, full.subarray(0, 20));
      const r = await exportTo('csv', out);
      expect(r.code, r.stderr).toBe(0);
      expect(readFileSync(out).equals(full)).toBe(true);
    });
  });
});
