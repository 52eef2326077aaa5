/**
 * The pipeline language's version and CHANGELOG.md stay together: the release package.json
 * names has an entry that says which language it reads, every language version has a release
 * that introduced it, and every change of meaning in the registry is of a version that exists.
 * Raising LANGUAGE_VERSION without writing its CHANGELOG entry fails here.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LANGUAGE_VERSION, UNSTATED_LANGUAGE_VERSION } from '../../src/pipeline/definition/language.js';
import { MEANING_CHANGES } from '../../src/pipeline/definition/language-changes.js';

const ROOT = join(import.meta.dirname, '..', '..');
const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

/** Each release section: its version and the pipeline language its first line names. */
const releases = [...changelog.matchAll(/^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}\n\nPipeline language (\d+)\b/gm)].map((m) => ({
  version: m[1]!,
  language: Number(m[2]),
}));

describe('the pipeline language and CHANGELOG.md', () => {
  it('package.json holds a semantic version whose release the CHANGELOG lists first, reading the current language', () => {
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(releases[0]).toEqual({ version: pkg.version, language: LANGUAGE_VERSION });
  });

  it('every language version from the unstated one to the current has a release, and versions only rise', () => {
    const languages = releases.map((r) => r.language).reverse();
    for (let v = UNSTATED_LANGUAGE_VERSION; v <= LANGUAGE_VERSION; v++) expect(languages).toContain(v);
    expect([...languages].sort((a, b) => a - b)).toEqual(languages);
  });

  it('every change of meaning belongs to a language version past the first, listed under Changed meaning of its release', () => {
    for (const c of MEANING_CHANGES) {
      expect(c.since).toBeGreaterThan(UNSTATED_LANGUAGE_VERSION);
      expect(c.since).toBeLessThanOrEqual(LANGUAGE_VERSION);
      const release = releases.find((r) => r.language === c.since)!;
      const section = changelog.slice(changelog.indexOf(`## [${release.version}]`)).split(/^## \[/m)[1]!;
      expect(section).toContain('### Changed meaning');
    }
    expect(new Set(MEANING_CHANGES.map((c) => c.id)).size).toBe(MEANING_CHANGES.length);
  });
});
