/**
 * Progress of the long steps that are not a pipeline run: `plan` tells how far it read (rows and
 * the share of the source bytes) after each batch, and the step display turns that into a line
 * on a terminal or `progress` log lines elsewhere.
 */
import { describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { Writable } from 'node:stream';
import { loadPipeline, summarisePlan, type PlanProgress } from '../../src/pipeline/read-pipeline.js';
import { generateCrmSamples } from '../../src/pipeline/samples/generate-crm.js';
import { stepDisplay } from '../../src/cli/progress.js';
import { initPipeline, type InitProgress } from '../../src/init/index.js';
import { tempDir } from '../support/service.js';

describe('plan progress', () => {
  it('tells after each batch how many rows were read and how far through the source bytes', async () => {
    const dir = tempDir('stagecoach-plan-progress-');
    try {
      await generateCrmSamples({ out: dir, persons: 3000, organisations: 0 });
      const def = await loadPipeline(join(dir, 'pipeline.yaml'));
      const seen: PlanProgress[] = [];
      const summary = await summarisePlan(def, { onProgress: (p) => seen.push(p) });
      expect(seen.length).toBeGreaterThan(1);
      expect(seen.at(-1)!.rowsRead).toBe(summary.rowsRead);
      for (let i = 1; i < seen.length; i++) {
        expect(seen[i]!.rowsRead).toBeGreaterThan(seen[i - 1]!.rowsRead);
        expect(seen[i]!.fraction!).toBeGreaterThanOrEqual(seen[i - 1]!.fraction!);
      }
      // the last batch starts in the last rows of the file: most of it is read
      expect(seen.at(-1)!.fraction).toBeGreaterThan(0.9);
      expect(seen.at(-1)!.fraction).toBeLessThanOrEqual(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('init progress', () => {
  it('tells how many rows it profiled, file by file, then how far plan read', async () => {
    const dir = tempDir('stagecoach-init-progress-');
    try {
      await generateCrmSamples({ out: join(dir, 'export'), persons: 3000, organisations: 0 });
      const seen: InitProgress[] = [];
      const result = await initPipeline({
        inputs: [join(dir, 'export', 'klanten.csv')],
        outDir: join(dir, 'out'),
        onProgress: (p) => seen.push(p),
      });
      const profiled = seen.filter((p) => p.step === 'profile');
      const planned = seen.filter((p) => p.step === 'plan');
      expect(profiled.at(-1)).toEqual({
        step: 'profile',
        file: join(dir, 'export', 'klanten.csv'),
        rowsRead: result.sources[0]!.profile.rows,
      });
      expect(planned.at(-1)!.rowsRead).toBe(result.plan!.rowsRead);
      expect(seen.indexOf(planned[0]!)).toBeGreaterThan(seen.indexOf(profiled.at(-1)!));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A stream that keeps what is written to it, as a terminal or not. */
function captured(isTTY: boolean) {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  }) as unknown as NodeJS.WriteStream;
  (stream as { isTTY?: boolean }).isTTY = isTTY;
  return { stream, text: () => chunks.join('') };
}

describe('step display', () => {
  it('draws done of total, rate, share and time left on a terminal', async () => {
    const out = captured(true);
    const step = stepDisplay({ label: 'removing invalid records from staging', unit: 'records', stream: out.stream });
    await new Promise((r) => setTimeout(r, 1000));
    step.update(250, 1000);
    expect(out.text()).toMatch(
      /^\r\x1b\[2Kremoving invalid records from staging {2}250 of 1,000 records {2}2\d\d\/s {2}25% {2}ETA 0:0[34]$/,
    );
    step.done();
    expect(out.text().endsWith('\r\x1b[2K')).toBe(true);
  });

  it('writes progress log lines, and none for a short step that asks to stay quiet', () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino(
      { base: null, timestamp: false },
      new Writable({
        write(chunk, _enc, done) {
          lines.push(JSON.parse(String(chunk)));
          done();
        },
      }),
    );
    const quiet = stepDisplay({ label: 'plan p.yaml', unit: 'rows', stream: captured(false).stream, logger, quietWhenShort: true });
    quiet.update(10, undefined, 0.5);
    quiet.done();
    expect(lines).toEqual([]);
    const every = stepDisplay({ label: 'plan p.yaml', unit: 'rows', stream: captured(false).stream, logger, logEverySeconds: 0 });
    every.update(10, undefined, 0.5);
    every.done();
    expect(lines.map((l) => [l.msg, l.step, l.done, l.percent, l.unit])).toEqual([
      ['progress', 'plan p.yaml', 10, 50, 'rows'],
      ['step done', 'plan p.yaml', 10, 50, 'rows'],
    ]);
  });
});
