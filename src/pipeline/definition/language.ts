/**
 * The version of the pipeline language, and what a pipeline written for an earlier one means
 * now. A pipeline states the language it was written for (`language: 2`); one without it was
 * written for language 1, the language of the releases before `language:` existed (CHANGELOG.md).
 *
 * Every change of meaning is one entry of the registry (language-changes.ts): the version it
 * came with and a finder that points at each place of a pipeline or mapping file written for an
 * earlier version whose meaning changed, with the statement that keeps the earlier meaning where
 * one exists. Loading refuses such a file at once, every place named at its line with its fix
 * (never row by row); `stagecoach upgrade` writes the fixes that keep the meaning (upgrade.ts).
 */
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, stringify, visit, type Document } from 'yaml';
import { StagecoachError } from '../../contract/errors.js';

/** The language this stagecoach reads and `init` writes. CHANGELOG.md has an entry for each version (test/unit/language-version.test.ts). */
export const LANGUAGE_VERSION = 2;

/** The language of a pipeline that states none: the one before `language:` existed. */
export const UNSTATED_LANGUAGE_VERSION = 1;

/** One place of a file whose meaning changed since the version it was written for. */
export interface ChangeSite {
  /** The node the change is about: its line and column are shown. */
  node: Node;
  /** What the text meant in the version it was written for, and what it means now. */
  was: string;
  /** What to write to keep the earlier meaning (or to choose). */
  fix: string;
  /** The text that keeps the earlier meaning, replacing `range` of the file; absent when no statement of the current language keeps it. */
  keep?: { range: [number, number]; text: string };
}

/** One change of meaning between two versions of the language: one entry of the registry. */
export interface MeaningChange {
  /** Stable name, e.g. `phone-region`. */
  id: string;
  /** The first version with the new meaning: files written for an earlier version are looked at. */
  since: number;
  /** Which file the changed text lives in. */
  file: 'pipeline' | 'mapping';
  /** One line, as CHANGELOG.md says it. */
  summary: string;
  /** Every place of `doc` (a file written for an earlier version) whose meaning changed. */
  find(doc: Document): ChangeSite[];
}

/** A change site with its place in a file, ready to show. */
export interface LocatedSite {
  change: string;
  file: string;
  line: number;
  column: number;
  was: string;
  fix: string;
  keep?: { range: [number, number]; text: string };
}

/**
 * The language a pipeline's text states: `undefined` when what it states is no version (the
 * schema then says what is wrong), `UNSTATED_LANGUAGE_VERSION` when it states none.
 */
export function statedLanguage(pipelineText: string): number | undefined {
  const doc = parseDocument(pipelineText);
  if (!isMap(doc.contents)) return UNSTATED_LANGUAGE_VERSION;
  const value = doc.get('language');
  if (value === undefined || value === null) return UNSTATED_LANGUAGE_VERSION;
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= LANGUAGE_VERSION ? (value as number) : undefined;
}

/**
 * Every place of one file (`text`, shown as `display`) written for `version` whose meaning
 * `changes` (of that file's kind) changed since.
 */
export function findChangedMeanings(
  text: string,
  display: string,
  version: number,
  kind: MeaningChange['file'],
  changes: readonly MeaningChange[],
): LocatedSite[] {
  const relevant = changes.filter((c) => c.file === kind && c.since > version);
  if (relevant.length === 0) return [];
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  if (doc.errors.length > 0) return []; // the schema's loader reports a file YAML cannot read
  return relevant
    .flatMap((c) =>
      c.find(doc).map((s) => {
        const at = lc.linePos(s.node.range?.[0] ?? 0);
        return { change: c.id, file: display, line: at.line, column: at.col, was: s.was, fix: s.fix, ...(s.keep ? { keep: s.keep } : {}) };
      }),
    )
    .sort((a, b) => a.line - b.line || a.column - b.column);
}

/** `file:line:column: was; fix` for each site, one a line; `(by hand)` where upgrade has no statement that keeps the meaning. */
export function describeSites(sites: readonly LocatedSite[]): string[] {
  return sites.map((s) => `${s.file}:${s.line}:${s.column}: ${s.was}; ${s.fix}${s.keep ? '' : ' (by hand)'}`);
}

/**
 * The refusal of a pipeline written for an earlier language whose meaning changed: every place
 * at its line with its fix, and the command that writes the fixes.
 */
export function changedMeaningError(pipeline: string, version: number, stated: boolean, sites: readonly LocatedSite[]): StagecoachError {
  const first = sites[0]!;
  const written = stated ? `written for pipeline language ${version}` : `written for pipeline language ${version} (it states no language:)`;
  const lines = describeSites(sites);
  return new StagecoachError(
    'CONFIG_INVALID',
    `${pipeline}: ${written}; this stagecoach reads language ${LANGUAGE_VERSION}, where ${sites.length === 1 ? 'one place means' : `${sites.length} places mean`} something else:\n  ${lines.join('\n  ')}\n` +
      `\`stagecoach upgrade ${pipeline}\` rewrites the files to language ${LANGUAGE_VERSION} keeping their meaning${sites.every((s) => s.keep) ? '' : ', except the places marked (by hand)'} (CHANGELOG.md)`,
    { file: first.file, line: first.line, column: first.column, problems: sites.map(({ keep: _keep, ...rest }) => rest) },
  );
}

// ---------------------------------------------------------------------------------------------
// Helpers for the finders of language-changes.ts

/** A value written as YAML flow text (`{ phone: { region: NL } }`), to replace a node's text. */
export function flowText(value: unknown): string {
  return stringify(value, { collectionStyle: 'flow', lineWidth: 0 }).trimEnd();
}

/** The text range of a node, as a `keep` replaces it. */
export function nodeRange(node: Node): [number, number] {
  const r = node.range ?? [0, 0, 0];
  return [r[0], r[1]];
}

/**
 * Each step of every `transforms:` list of a mapping (the field's, the key's, an alternative's),
 * with its name: `phone` for both `phone` and `{ phone: … }`; the code tables (`codes:`) are
 * data, not steps, and are left out.
 */
export function transformSteps(doc: Document): { name: string; item: Node; options: Node | null }[] {
  const out: { name: string; item: Node; options: Node | null }[] = [];
  visit(doc, {
    Pair(_, pair, path) {
      if (path.length === 2 && isScalar(pair.key) && pair.key.value === 'codes') return visit.SKIP;
      if (!isScalar(pair.key) || pair.key.value !== 'transforms' || !isSeq(pair.value)) return undefined;
      for (const item of pair.value.items) {
        if (isScalar(item) && typeof item.value === 'string') out.push({ name: item.value, item, options: null });
        else if (isMap(item) && item.items.length === 1 && isScalar(item.items[0]!.key)) {
          const only = item.items[0]!;
          out.push({ name: String((only.key as { value: unknown }).value), item, options: (only.value as Node | null) ?? null });
        }
      }
      return undefined;
    },
  });
  return out;
}
