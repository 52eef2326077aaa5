/**
 * Writing the guessed pipeline and mappings as YAML a person reads: flow style for each field
 * (as the hand-written mappings in mappings/ are), every guess's reason as a comment beside it,
 * every TODO at the top. Pure: returns text.
 */
import type { Dialect } from './sniff.js';
import type { Y } from './evidence.js';
import type { GuessedMapping } from './guess.js';
import { LANGUAGE_VERSION } from '../pipeline/definition/language.js';

const PLAIN = /^[A-Za-z_][A-Za-z0-9_./-]*$/;
const RESERVED = /^(true|false|null|yes|no|on|off|y|n|~)$/i;

/** A YAML flow value (strings plain where YAML reads them back as the same string). */
export function flow(v: Y): string {
  if (v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return PLAIN.test(v) && !RESERVED.test(v) ? v : JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(flow).join(', ')}]`;
  return `{ ${Object.entries(v)
    .map(([k, x]) => `${flow(k)}: ${flow(x)}`)
    .join(', ')} }`;
}

const comment = (text: string) => text.replace(/\s*\n\s*/g, ' ');

/** One source's mapping file. */
export function mappingYaml(m: GuessedMapping, meta: { source: string; file: string; schema?: string }): string {
  const out: string[] = [];
  if (meta.schema) out.push(`# yaml-language-server: $schema=${meta.schema}`);
  out.push(`# Mapping of ${meta.file} (source ${meta.source}), written by \`stagecoach init\`: every guess says why.`);
  out.push('# Check each line, then run `stagecoach plan` on the pipeline. Reference: docs/mappings.md.');
  for (const t of m.todos) out.push(`# TODO ${comment(t)}`);
  for (const n of m.notes) out.push(`# ${comment(n)}`);
  out.push(`type: ${m.type}`);
  out.push('key:');
  out.push(`  column: ${flow(m.keyColumn ?? 'TODO')}`);
  out.push(`  scope: ${flow(m.scope)}              # referenceId = uuidv5("${m.scope}:<key>", target.referenceNamespace)`);
  if (m.keyTransforms.length > 0) out.push(`  transforms: ${flow(m.keyTransforms)}`);
  out.push('record:');
  for (const f of m.fields) {
    if (f.why) out.push(`  # ${comment(f.why)}`);
    if (Array.isArray(f.value)) {
      out.push(`  ${flow(f.name)}:`);
      for (const item of f.value) out.push(`    - ${flow(item)}`);
    } else out.push(`  ${flow(f.name)}: ${flow(f.value)}`);
  }
  // Every table guess made is referenced by a code transform, so each is written, an empty one
  // too: leaving it out made the mapping refer to a table it never declared (`unknown code table`).
  const tables = Object.entries(m.codes);
  if (tables.length > 0) {
    out.push('codes:');
    for (const [name, table] of tables) out.push(`  ${flow(name)}: ${flow(table as Y)}`);
  }
  if (m.unmapped.length > 0) {
    out.push('# Columns no field reads:');
    for (const u of m.unmapped) out.push(`#   ${u.column}: ${comment(u.reason)}`);
  }
  return `${out.join('\n')}\n`;
}

export interface PipelineSourceOut {
  name: string;
  path: string;
  dialect: Dialect;
  mapping: string;
}

/** The pipeline file. */
export function pipelineYaml(p: {
  name: string;
  namespace: string;
  sources: PipelineSourceOut[];
  schema?: string;
  files: string[];
}): string {
  const out: string[] = [];
  if (p.schema) out.push(`# yaml-language-server: $schema=${p.schema}`);
  out.push(`# Pipeline written by \`stagecoach init\` from ${p.files.join(', ')}. Nothing was sent anywhere.`);
  out.push('# Read the comments, then: stagecoach plan <this file>. Reference: docs/pipelines.md, docs/init.md.');
  out.push(`language: ${LANGUAGE_VERSION}   # version of the pipeline language this file is written in (CHANGELOG.md)`);
  out.push(`name: ${flow(p.name)}`);
  out.push('component: Counterparties');
  out.push('sources:');
  for (const s of p.sources) {
    out.push(`  - name: ${flow(s.name)}`);
    for (const e of s.dialect.evidence) out.push(`    # ${comment(e)}`);
    out.push(`    format: ${s.dialect.kind}`);
    out.push(`    path: ${flow(s.path)}`);
    if (s.dialect.kind !== 'xlsx') out.push(`    encoding: ${s.dialect.encoding}`); // a workbook's text is always Unicode
    if (s.dialect.kind === 'csv') {
      const d = s.dialect;
      const csv: Record<string, Y> = { delimiter: d.delimiter, quote: d.quote, header: d.header };
      if (!d.header) csv.columns = d.columns;
      out.push(`    csv: ${flow(csv)}`);
    } else if (s.dialect.kind === 'json' && s.dialect.arrayPath) out.push(`    json: { path: ${flow(s.dialect.arrayPath)} }`);
    else if (s.dialect.kind === 'xlsx') out.push(`    xlsx: { sheet: ${flow(s.dialect.sheet)}, headerRow: ${s.dialect.headerRow} }`);
    else if (s.dialect.kind === 'fixed-width') {
      const d = s.dialect;
      out.push('    fixedWidth:');
      out.push(`      length: ${d.length}`);
      out.push(`      header: ${d.header}`);
      if (d.trailer) out.push(`      trailer: ${flow(d.trailer as Y)}`);
      out.push('      columns:');
      for (const c of d.columns) out.push(`        - ${flow(c)}${d.decimals[c.name] ? `   # ${d.decimals[c.name]} implied decimals` : ''}`);
    }
    out.push(`    mapping: ${flow(s.mapping)}`);
  }
  out.push('target:');
  out.push('  migration: current');
  out.push(`  referenceNamespace: ${p.namespace}   # keep it fixed for this migration: re-runs then make the same referenceIds`);
  return `${out.join('\n')}\n`;
}
