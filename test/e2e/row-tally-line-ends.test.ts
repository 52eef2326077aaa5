/**
 * The row tally through `migrate`, against the real embedded service: an export whose CRLF line
 * ends were converted a second time (CR CR LF) is read to clean rows, every physical line
 * accounted for, and the migration balances (it used to end exit 1, NOT BALANCED, with an LF at
 * the start of every row's first field); the same export in UTF-16 declared utf-8 is refused
 * before the platform is touched, naming the file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StagecoachClient } from '../../src/client/index.js';
import type { ReconciliationReport } from '../../src/reconcile/report-model.js';
import { runCli } from '../support/cli.js';
import { startTestService, type TestService } from '../support/service.js';
import { demoClient, generateSamples, type Samples } from '../support/pipeline-run.js';

describe('line ends and encodings the tally must get right', () => {
  let service: TestService;
  let client: StagecoachClient;
  let samples: Samples;
  let original: Buffer;
  const klanten = () => join(samples.dir, 'klanten.csv');

  beforeAll(async () => {
    service = await startTestService();
    client = demoClient(service.url);
    samples = await generateSamples({ persons: 90, organisations: 0, batchRecords: 30, inFlight: 2 });
    original = readFileSync(klanten());
  });
  afterAll(async () => {
    await client?.close();
    await service?.dispose();
    if (samples) rmSync(samples.dir, { recursive: true, force: true });
  });

  it('UTF-16 declared utf-8: exit 2 naming the file, before any migration', async () => {
    const text = original.toString('utf8');
    writeFileSync(klanten(), Buffer.from(text, 'utf16le'));
    const res = await runCli(['migrate', 'pipeline.yaml', '--base-url', service.url], { cwd: samples.dir });
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toBe(
      'stagecoach: klanten.csv looks like UTF-16LE, declared utf-8: a NUL byte is every other byte of its first 4,096 bytes; declare encoding: utf-16le (or auto)\n',
    );
    expect(await client.migrations.current()).toBeUndefined();
  });

  it('CR CR LF line ends: clean rows, every line accounted for, balanced', async () => {
    const crlf = original.toString('latin1').split('\r\n');
    expect(crlf.length).toBeGreaterThan(90); // the generator writes CRLF
    writeFileSync(klanten(), Buffer.from(crlf.join('\r\r\n'), 'latin1'));
    const out = join(samples.dir, 'report');
    const res = await runCli(['migrate', 'pipeline.yaml', '--base-url', service.url, '--out', out], { cwd: samples.dir });
    expect(res.code, res.stdout.slice(-1500) + res.stderr.slice(-1500)).toBe(0);
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as ReconciliationReport;
    expect(report.balanced).toBe(true);
    const file = report.sourceFiles.find((f) => f.file === 'klanten.csv')!;
    // the header, 90 rows, and after each the empty line its second CR makes (the last line ends too)
    expect(file).toMatchObject({ physicalLines: 182, blankLines: 91, headerLines: 1, rowsRead: 90, rowErrors: 0 });
    expect(file.disagreement).toBeUndefined();
    // the rows came through clean: each at its line, its key the generator's, no CR or LF in any value
    const mapped = await runCli(['map', 'pipeline.yaml', '--json', '--sample', '3'], { cwd: samples.dir });
    const rows = mapped.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { values: Record<string, string>; provenance: { line: number } });
    expect(rows.map((r) => r.provenance.line)).toEqual([3, 5, 7]);
    expect(rows.map((r) => r.values.klantnr)).toEqual(crlf.slice(1, 4).map((l) => l.split(';')[0]));
    expect(rows.every((r) => Object.values(r.values).every((v) => !/[\r\n]/.test(v)))).toBe(true);
  });
});
