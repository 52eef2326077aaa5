/**
 * docs/architecture.md stays true: every folder it names (`src/…/`) exists, and every top
 * folder of src/ is named on the page.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const page = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
/** Every folder the page names: a path under src/ that ends in a slash. */
const named = [...new Set([...page.matchAll(/\bsrc\/(?:[a-z0-9-]+\/)+/g)].map((m) => m[0]))];

describe('docs/architecture.md', () => {
  it('names only folders that exist', () => {
    expect(named.length).toBeGreaterThan(10);
    const missing = named.filter((f) => !(existsSync(join(ROOT, f)) && statSync(join(ROOT, f)).isDirectory()));
    expect(missing).toEqual([]);
  });

  it('names every top folder of src/', () => {
    const top = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => `src/${d.name}/`);
    expect(top.filter((f) => !named.includes(f))).toEqual([]);
  });
});
