/**
 * `stagecoach upgrade <pipeline>`: rewrites a pipeline written for an earlier version of the
 * language, and the mappings it names, to the current version, keeping what they meant. Each
 * change of meaning (language-changes.ts) gives the text that keeps the earlier meaning; only
 * that text is replaced (found through yaml's Document API, cut by its source range), so every
 * comment, blank line and layout of the files stays as written. Where no statement of the
 * current language keeps a meaning, nothing is written and each such place is named.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isMap, isScalar, parseDocument } from 'yaml';
import { StagecoachError } from '../../contract/errors.js';
import { displayPath } from '../source/display-path.js';
import { describeSites, findChangedMeanings, LANGUAGE_VERSION, type LocatedSite, type MeaningChange, statedLanguage } from './language.js';
import { MEANING_CHANGES } from './language-changes.js';
import { loadPipeline } from './load-pipeline.js';

/** What an upgrade did (or, with `write: false`, would do). */
export interface UpgradeReport {
  pipeline: string;
  from: number;
  to: number;
  /** Each file rewritten, with the places changed. */
  files: { file: string; sites: LocatedSite[] }[];
  written: boolean;
}

/** A file's text with every change of `kind` since `from` applied in registry order; the places changed, or those no text keeps. */
function upgradeText(text: string, display: string, from: number, kind: MeaningChange['file']): { text: string; sites: LocatedSite[] } {
  const sites: LocatedSite[] = [];
  let out = text;
  // One change at a time: a later change reads the text as the earlier one left it (the phone step the region change wrote).
  for (const change of MEANING_CHANGES) {
    const found = findChangedMeanings(out, display, from, kind, [change]);
    sites.push(...found);
    const kept = found.flatMap((s) => (s.keep ? [s.keep] : [])).sort((a, b) => b.range[0] - a.range[0]);
    for (const k of kept) out = out.slice(0, k.range[0]) + k.text + out.slice(k.range[1]);
  }
  return { text: out, sites };
}

/** The pipeline's text stating `language: to`: its value replaced, or a line before the first key. */
function stateLanguage(text: string, to: number): string {
  const doc = parseDocument(text);
  if (!isMap(doc.contents) || doc.contents.items.length === 0) return `language: ${to}\n${text}`;
  const stated = doc.contents.items.find((p) => isScalar(p.key) && p.key.value === 'language');
  const range = stated && isScalar(stated.value) ? stated.value.range : undefined;
  if (range) return text.slice(0, range[0]) + String(to) + text.slice(range[1]);
  const first = (doc.contents.items[0]!.key as { range?: [number, number, number] }).range?.[0] ?? 0;
  const lineStart = text.lastIndexOf('\n', first - 1) + 1;
  return `${text.slice(0, lineStart)}language: ${to}\n${text.slice(lineStart)}`;
}

/** The mapping files a pipeline's text names, resolved against its folder (each once). */
function mappingPaths(text: string, pipelinePath: string): string[] {
  const data = parseDocument(text).toJS() as { sources?: { mapping?: unknown }[] } | null;
  const names = (data?.sources ?? []).flatMap((s) => (typeof s?.mapping === 'string' ? [s.mapping] : []));
  return [...new Set(names.map((m) => resolve(dirname(pipelinePath), m)))];
}

/**
 * Rewrites `file` and its mappings to the current language where that keeps their meaning, and
 * checks the result loads. Throws, writing nothing, when a place has no statement that keeps it.
 * @example const report = await upgradePipeline('pipelines/old.yaml', { write: true });
 *          report.files.map((f) => f.sites.length) // [0, 3]
 */
export async function upgradePipeline(file: string, options: { write: boolean }): Promise<UpgradeReport> {
  const path = resolve(file);
  const display = displayPath(path);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new StagecoachError(
      'CONFIG_INVALID',
      `Cannot read ${display}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      {
        file: display,
      },
    );
  }
  const from = statedLanguage(text);
  if (from === undefined)
    throw new StagecoachError(
      'CONFIG_INVALID',
      `${display}: language: is not a version this stagecoach knows (1 to ${LANGUAGE_VERSION}); upgrade stagecoach, or state the version the file was written for`,
      { file: display },
    );
  const report: UpgradeReport = { pipeline: display, from, to: LANGUAGE_VERSION, files: [], written: false };
  if (from === LANGUAGE_VERSION && /^language\s*:/m.test(text)) return report;
  const pipeline = upgradeText(text, display, from, 'pipeline');
  const writes = [{ path, file: display, text: stateLanguage(pipeline.text, LANGUAGE_VERSION), sites: pipeline.sites }];
  for (const m of mappingPaths(text, path)) {
    let mappingText: string;
    try {
      mappingText = readFileSync(m, 'utf8');
    } catch {
      continue; // loading the upgraded pipeline names a missing mapping
    }
    const upgraded = upgradeText(mappingText, displayPath(m), from, 'mapping');
    if (upgraded.sites.length > 0) writes.unshift({ path: m, file: displayPath(m), text: upgraded.text, sites: upgraded.sites });
  }
  const byHand = writes.flatMap((w) => w.sites.filter((s) => !s.keep));
  if (byHand.length > 0)
    throw new StagecoachError(
      'CONFIG_INVALID',
      `${display}: nothing written; ${byHand.length === 1 ? 'one place has' : `${byHand.length} places have`} no statement in language ${LANGUAGE_VERSION} that keeps what it meant in language ${from}, choose:\n  ${describeSites(byHand).join('\n  ')}`,
      { file: byHand[0]!.file, line: byHand[0]!.line, column: byHand[0]!.column },
    );
  report.files = writes.map((w) => ({ file: w.file, sites: w.sites }));
  if (!options.write) return report;
  // The mappings first: a pipeline still stating its old language is upgraded again by the next run.
  for (const w of writes) writeFileSync(w.path, w.text);
  report.written = true;
  await loadPipeline(path);
  return report;
}
