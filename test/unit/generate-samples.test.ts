import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { generateCrmSamples } from '../../src/pipeline/samples/generate-crm.js';
import { loadPipeline, readPipeline } from '../../src/pipeline/read-pipeline.js';
import { identityKey } from '../../src/service/counterparties/store.js';
import { tempDir } from '../support/service.js';

const dir = tempDir('stagecoach-generate-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('generate-samples', () => {
  it('makes distinct people unless a defect is planted: no two staged records share the identity the platform checks', async () => {
    await generateCrmSamples({ out: dir, persons: 60_000, organisations: 0, seed: 7, defectsPer10k: 0 });
    const seen = new Map<string, string>();
    const twins: string[] = [];
    for await (const row of readPipeline(await loadPipeline(join(dir, 'pipeline.yaml')))) {
      if (row.kind !== 'mapped') continue;
      const key = identityKey(row.record);
      if (key === null) continue;
      const first = seen.get(key);
      if (first) twins.push(`${first} = ${row.legacyKey}`);
      else seen.set(key, row.legacyKey);
    }
    expect(seen.size).toBeGreaterThan(50_000);
    expect(twins).toEqual([]);
  });
});
