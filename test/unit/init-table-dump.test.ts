/**
 * `init` on a table dump (issue 46): the child tables among the files, their parent, the column
 * holding its key, the list their rows go into and their own id, each guess explained, proposed
 * in pipeline.yaml; a file that names no other file's keys is no child.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { initPipeline } from '../../src/init/index.js';
import { ROOT } from '../support/cli.js';
import { tempDir } from '../support/service.js';

const DUMP = join(ROOT, 'samples/table-dump');

describe('init recognises a table dump', () => {
  it('proposes each child table with its parent, key, list and id, and says why', async () => {
    const out = tempDir('stagecoach-init-dump-');
    const r = await initPipeline({
      inputs: ['klanten.csv', 'adressen.csv', 'telefoons.jsonl'].map((f) => join(DUMP, f)),
      outDir: out,
      plan: false,
    });
    expect(r.children?.map(({ why: _, ...g }) => g)).toEqual([
      { child: 'adressen', of: 'klanten', key: 'KLANTNR', into: 'addresses', id: 'ADRESNR' },
      { child: 'telefoons', of: 'klanten', key: 'klant', into: 'telephoneNumbers', id: undefined },
    ]);
    expect(r.children![0]!.why[0]).toMatch(/adressen\.KLANTNR holds klanten's keys \(KLANTNR\): 99% of its sampled values/);
    const pipeline = readFileSync(r.pipelineFile, 'utf8');
    expect(pipeline).toContain('#   adressen: child: { of: klanten, key: KLANTNR, into: addresses, id: ADRESNR }');
  });

  it('proposes nothing for files that do not name each other', async () => {
    const out = tempDir('stagecoach-init-nodump-');
    const a = join(out, 'people.csv');
    const b = join(out, 'branches.csv');
    writeFileSync(a, 'id,surname,initials\n1,Jansen,J.\n2,Bakker,B.\n3,Visser,V.\n');
    writeFileSync(b, 'code,city,postcode\nB7,Ede,1234 AB\nB8,Gouda,2345 BC\nB8,Gouda,2345 BC\n');
    const r = await initPipeline({ inputs: [a, b], outDir: join(out, 'init'), plan: false });
    expect(r.children).toBeUndefined();
  });
});
