/**
 * The lean heap of `run` and `migrate` (src/cli/lean-heap.ts): the main thread's young generation
 * stays held after a worker thread starts, although V8 resets the growth factor whenever it sets
 * up a heap. Each case runs in a child process, since V8 flags are per process.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const LEAN_HEAP = fileURLToPath(new URL('../../dist/src/cli/lean-heap.js', import.meta.url));

/** Young generation bytes after churning with many survivors, as records in an upload window do. */
function youngGenerationAfterChurn(command: string, env: Record<string, string> = {}): { held: number; after: number } {
  const script = `
    const { leanHeapFor, modulesLoaded, youngGenerationBytes, YOUNG_GENERATION_BYTES } = await import(${JSON.stringify(LEAN_HEAP)});
    const { Worker } = await import('node:worker_threads');
    leanHeapFor(['node', 'stagecoach', ${JSON.stringify(command)}]);
    modulesLoaded();
    const churn = async (n) => {
      let keep = [];
      for (let i = 0; i < n; i++) {
        keep.push({ i, text: 'record ' + i });
        if (keep.length > 60000) keep = [];
        if (i % 50000 === 0) await new Promise((r) => setTimeout(r, 25));
      }
    };
    await churn(1_000_000);
    const held = youngGenerationBytes();
    const worker = new Worker('setTimeout(() => {}, 50)', { eval: true, resourceLimits: { maxYoungGenerationSizeMb: 4 } });
    await new Promise((r) => worker.once('online', r));
    await churn(2_000_000);
    console.log(JSON.stringify({ held, after: youngGenerationBytes(), target: YOUNG_GENERATION_BYTES }));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, ...env }, encoding: 'utf8' });
  return JSON.parse(out) as { held: number; after: number };
}

describe('lean heap', () => {
  it('holds the young generation of a run at its size, also after a worker thread started', () => {
    const { held, after } = youngGenerationAfterChurn('run');
    expect(held).toBeGreaterThanOrEqual(8 * 1024 * 1024);
    expect(held).toBeLessThanOrEqual(16 * 1024 * 1024);
    expect(after).toBe(held);
  });

  it('leaves other commands, and STAGECOACH_LEAN_HEAP=0, to V8', () => {
    const plan = youngGenerationAfterChurn('plan');
    const optedOut = youngGenerationAfterChurn('run', { STAGECOACH_LEAN_HEAP: '0' });
    expect(plan.after).toBeGreaterThan(16 * 1024 * 1024);
    expect(optedOut.after).toBeGreaterThan(16 * 1024 * 1024);
  });
});
