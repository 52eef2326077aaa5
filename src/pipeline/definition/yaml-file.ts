/**
 * Reads a YAML declaration (pipeline or mapping) and validates it with a zod schema, so that
 * every error names the file, line and column of the offending node and says what was expected.
 * Both the pipeline loader and the mapping loader go through here: one way to report a bad file.
 */
import { readFile } from 'node:fs/promises';
import { isMap, isNode, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document } from 'yaml';
import type { z } from 'zod';
import { StagecoachError } from '../../contract/errors.js';
import { suggestKey } from './schema-keys.js';
import { cutText } from '../../contract/cut.js';
import { readLimits } from '../read-limits.js';

/** One problem in a declaration file, located. */
export interface DeclarationProblem {
  file: string;
  line: number;
  column: number;
  path: string;
  message: string;
}

/**
 * Parses `file` and validates it against `schema`. Throws one `CONFIG_INVALID` StagecoachError
 * whose message lists every problem as `file:line:column: path: what is wrong` (one a line).
 * @example const spec = await loadYamlFile('pipelines/crm.yaml', pipelineFileSchema, 'pipelines/crm.yaml');
 */
export async function loadYamlFile<S extends z.ZodType>(
  file: string,
  schema: S,
  displayName = file,
  check?: ExtraCheck<z.output<S>>,
): Promise<z.output<S>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new StagecoachError(
      'CONFIG_INVALID',
      `Cannot read ${displayName}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { file: displayName },
      { cause: err },
    );
  }
  return parseYamlText(text, schema, displayName, check);
}

/** Where a declaration holds a value: line and column (1-based) and the path of its node. */
export interface ValueLocation {
  line: number;
  column: number;
  path: string;
}

/**
 * Where a declaration's text names `value` as a value (not a key): the first node whose key is one
 * of `keys` (e.g. `column`), else the first anywhere; nothing under the top-level keys `skip`.
 * @example locateValue(mappingText, 'achternaam', { keys: ['column', 'each'], skip: ['codes'] }) // { line: 12, column: 22, path: 'record.lastName.column' }
 */
export function locateValue(
  text: string,
  value: string,
  opts: { keys: readonly string[]; skip: readonly string[] },
): ValueLocation | undefined {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  let keyed: { node: unknown; path: (string | number)[] } | undefined;
  let other: typeof keyed;
  const visit = (node: unknown, path: (string | number)[]): void => {
    if (keyed) return;
    const found = (child: unknown, at: string | number) => {
      if (!isScalar(child) || child.value !== value) return false;
      const p = [...path, at];
      if (typeof at === 'string' && opts.keys.includes(at)) keyed ??= { node: child, path: p };
      else other ??= { node: child, path: p };
      return true;
    };
    if (isMap(node))
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : '?';
        if (path.length === 0 && opts.skip.includes(key)) continue;
        if (!found(pair.value, key)) visit(pair.value, [...path, key]);
      }
    else if (isSeq(node)) node.items.forEach((item, i) => found(item, i) || visit(item, [...path, i]));
  };
  visit(doc.contents, []);
  const hit = keyed ?? other;
  const start = hit && nodeStart(hit.node);
  if (!hit || start === undefined) return undefined;
  const at = lc.linePos(start);
  return { line: at.line, column: at.col, path: formatPath(hit.path) };
}

/** Checks beyond the schema's shape; each problem names the path of the node it is about. */
export type ExtraCheck<T> = (value: T) => { path: (string | number)[]; message: string }[];

/** Same as `loadYamlFile` for text already in memory (tests, generated pipelines). */
export function parseYamlText<S extends z.ZodType>(
  text: string,
  schema: S,
  displayName: string,
  check?: ExtraCheck<z.output<S>>,
): z.output<S> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const problems = doc.errors.map((e) => {
      const at = e.linePos?.[0] ?? lineCounter.linePos(e.pos[0]);
      // yaml's own messages carry a code excerpt after a colon and newline: keep the first line.
      return {
        file: displayName,
        line: at.line,
        column: at.col,
        path: '',
        message: `YAML syntax error: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`,
      };
    });
    throw declarationError(displayName, problems);
  }
  const data: unknown = yamlData(doc, lineCounter, displayName);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    // Not a declaration at all (a path that names some other file, say a system file): its
    // content is not echoed, only what kind of document it is.
    const kind = Array.isArray(data) ? 'a list' : typeof data === 'string' ? 'a line of text' : `a ${typeof data}`;
    throw declarationError(displayName, [
      { file: displayName, line: 1, column: 1, path: '', message: `expected a YAML mapping of keys, got ${kind}; is this the right file?` },
    ]);
  }
  const parsed = schema.safeParse(data);
  let problems: DeclarationProblem[];
  if (parsed.success) {
    const extra = check?.(parsed.data) ?? [];
    if (extra.length === 0) return parsed.data;
    problems = extra.map((p) => locatePath(doc, lineCounter, displayName, p.path, p.message));
  } else {
    problems = parsed.error.issues
      .flatMap(resolveUnion)
      .map((issue) => locateIssue(doc, lineCounter, displayName, issue, data, (path, key) => suggestKey(schema, path, key)));
  }
  problems.sort((a, b) => a.line - b.line || a.column - b.column);
  throw declarationError(displayName, problems);
}

/**
 * The document as data, its aliases resolved within the alias limit: past it (an alias bomb, a
 * few lines that expand to gigabytes) the file is refused at its first alias with the limit named.
 */
export function yamlData(doc: Document, lc: LineCounter, file: string): unknown {
  const max = readLimits().STAGECOACH_YAML_MAX_ALIASES;
  try {
    return doc.toJS({ maxAliasCount: max }) ?? {};
  } catch (err) {
    if (!(err instanceof ReferenceError) || !/alias/i.test(err.message)) throw err;
    const at = lc.linePos(firstAlias(doc) ?? 0);
    throw declarationError(file, [
      {
        file,
        line: at.line,
        column: at.col,
        path: '',
        message: `the document's aliases expand past the limit of ${max} (STAGECOACH_YAML_MAX_ALIASES): an alias bomb, or a file that needs a higher limit; expected at most ${max} aliases resolved`,
      },
    ]);
  }
}

/** Where the document's first alias is (its offset), for the message. */
function firstAlias(doc: Document): number | undefined {
  let at: number | undefined;
  visit(doc, {
    Alias(_, node) {
      at = node.range?.[0];
      return visit.BREAK;
    },
  });
  return at;
}

function declarationError(file: string, problems: DeclarationProblem[]): StagecoachError {
  const lines = problems.map((p) => `${p.file}:${p.line}:${p.column}: ${p.path ? `${p.path}: ` : ''}${p.message}`);
  const first = problems[0]!;
  return new StagecoachError(
    'CONFIG_INVALID',
    problems.length === 1 ? `Invalid ${file}: ${lines[0]}` : `Invalid ${file}: ${problems.length} problems\n  ${lines.join('\n  ')}`,
    { file, line: first.line, column: first.column, problems },
  );
}

type Issue = z.core.$ZodIssue;

/**
 * A value that matches none of a union's forms: report the form it came closest to (the one
 * whose problems lie deepest, then the one with fewest), not "invalid input".
 */
function resolveUnion(issue: Issue): Issue[] {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return [issue];
  const depth = (list: readonly Issue[]) => Math.max(...list.map((i) => i.path.length + (i.code === 'unrecognized_keys' ? 0 : 0.5)));
  let best = issue.errors[0]!;
  for (const branch of issue.errors) {
    if (depth(branch) > depth(best) || (depth(branch) === depth(best) && branch.length < best.length)) best = branch;
  }
  // An unknown key usually explains the rest of that form's complaints (a misspelt option).
  const unknown = best.filter((i) => i.code === 'unrecognized_keys');
  return (unknown.length > 0 ? unknown : best).flatMap((i) => resolveUnion({ ...i, path: [...issue.path, ...i.path] } as Issue));
}

function locateIssue(
  doc: Document,
  lc: LineCounter,
  file: string,
  issue: Issue,
  data: unknown,
  suggest: (path: (string | number)[], key: string) => string | undefined,
): DeclarationProblem {
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  let offset = 0;
  if (issue.code === 'unrecognized_keys') {
    const parent = doc.getIn(path, true);
    const keyNode = isMap(parent)
      ? parent.items.find((item) => isPair(item) && isScalar(item.key) && issue.keys.includes(String(item.key.value)))?.key
      : undefined;
    offset = nodeStart(keyNode) ?? nodeStart(parent) ?? 0;
  } else {
    // A missing key has no node: point at the nearest existing ancestor (the map that lacks it).
    for (let n = path.length; n >= 0; n--) {
      const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
      const start = nodeStart(node);
      if (start !== undefined) {
        offset = start;
        break;
      }
    }
  }
  const at = lc.linePos(offset);
  let message = describeIssue(issue, valueAt(data, path));
  if (issue.code === 'unrecognized_keys') {
    const hints = issue.keys.flatMap((k) => {
      const s = suggest(path, k);
      if (!s) return [];
      return [issue.keys.length === 1 ? JSON.stringify(s) : `${JSON.stringify(s)} for ${JSON.stringify(k)}`];
    });
    if (hints.length > 0) message += `; did you mean ${hints.join(', ')}?`;
  }
  return { file, line: at.line, column: at.col, path: formatPath(path), message };
}

function locatePath(doc: Document, lc: LineCounter, file: string, path: (string | number)[], message: string): DeclarationProblem {
  let offset = 0;
  for (let n = path.length; n >= 0; n--) {
    const start = nodeStart(n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true));
    if (start !== undefined) {
      offset = start;
      break;
    }
  }
  const at = lc.linePos(offset);
  return { file, line: at.line, column: at.col, path: formatPath(path), message };
}

function nodeStart(node: unknown): number | undefined {
  return isNode(node) && node.range ? node.range[0] : undefined;
}

function valueAt(data: unknown, path: (string | number)[]): unknown {
  let cur = data;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return cur;
}

/** `sources[0].csv.delimiter` */
export function formatPath(path: (string | number)[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${p}` : p;
  return out;
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  return cutText(JSON.stringify(value));
}

function describeIssue(issue: Issue, value: unknown): string {
  switch (issue.code) {
    case 'invalid_type':
      return value === undefined ? `missing, expected ${issue.expected}` : `expected ${issue.expected}, got ${show(value)}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(' | ')}, got ${show(value)}`;
    case 'unrecognized_keys':
      return `unknown option${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
    case 'too_small':
      return `${issue.message.replace(/^Too small: /, '')}, got ${show(value)}`;
    case 'too_big':
      return `${issue.message.replace(/^Too big: /, '')}, got ${show(value)}`;
    default:
      return `${issue.message}, got ${show(value)}`;
  }
}
