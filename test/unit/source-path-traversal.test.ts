/**
 * Source paths that climb (issue 41): a path with more `../` than the pipeline's folder is deep
 * said "matches no file" while the file existed. `..` past the root stays at the root, as a
 * shell has it, in every form: a plain path, a glob below the climb, `./` and `..` mixed in, an
 * absolute path; and a path that truly names nothing still says so.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listSourceFiles } from '../../src/pipeline/source/index.js';

const root = mkdtempSync(join(tmpdir(), 'climb-'));
const dir = join(root, 'a', 'b', 'c');
mkdirSync(dir, { recursive: true });
mkdirSync(join(root, 'data'));
writeFileSync(join(root, 'data', 'k1.csv'), 'nr\n1\n');
writeFileSync(join(root, 'data', 'k2.csv'), 'nr\n2\n');
const up = (n: number) => '../'.repeat(n);
const depth = root.split('/').length - 1 + 3; // folders from / down to dir

describe('source paths that climb past the root', () => {
  it.each([
    ['exactly as deep', `${up(3)}data/k1.csv`],
    ['deeper than the folder', `${up(depth + 4)}${root.slice(1)}/data/k1.csv`],
    ['with ./ and .. mixed in', `./${up(depth + 1)}./${root.slice(1)}/a/../data/k1.csv`],
    ['absolute', `${root}/data/k1.csv`],
  ])('finds the file %s', async (_, path) => {
    expect((await listSourceFiles(dir, { name: 's', path })).map((f) => f.path)).toEqual([join(root, 'data', 'k1.csv')]);
  });

  it('finds the files of a glob below a climb past the root', async () => {
    const files = await listSourceFiles(dir, { name: 's', path: `${up(depth + 2)}${root.slice(1)}/data/*.csv` });
    expect(files.map((f) => f.path)).toEqual([join(root, 'data', 'k1.csv'), join(root, 'data', 'k2.csv')]);
  });

  it('still says a path names no file when it does not', async () => {
    await expect(listSourceFiles(dir, { name: 's', path: `${up(depth + 2)}${root.slice(1)}/data/none.csv` })).rejects.toThrow(
      /matches no file/,
    );
  });
});
