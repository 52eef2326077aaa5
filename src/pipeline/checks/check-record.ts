/**
 * Checks before upload: the staged-record schema the service itself uses
 * (`checkStagedCounterparty`), duplicate legacy keys, and relations to keys no source holds.
 * Each failure becomes a `RejectReason` naming field, value and what was expected.
 */
import { checkStagedCounterparty, isStagedCounterparty, type StagedCounterparty } from '../../contract/migration.js';
import { cutValue, showValue } from '../../contract/cut.js';
import type { RejectReason } from '../types.js';
import type { RelationRef } from '../mapping/compile.js';
import type { KeyIndex, KeyLocation } from './key-index.js';
import { fieldSchema, itemSchema, stagedSchema, targetKind, type TargetKind } from '../mapping/schema.js';
import { kindOf } from '../mapping/coerce.js';

function valueAt(obj: unknown, field: string): unknown {
  let cur: unknown = obj;
  for (const part of field.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** A record the staging schema accepts (`record`: the schema's copy, when asked for), or why not. */
export type RecordCheck = { ok: true; record?: StagedCounterparty } | { ok: false; reasons: RejectReason[] };

/**
 * Runs the staging schema on a mapped record. Fields the mapping already refused are not
 * reported twice. With `keep` false an accepted record comes back without the schema's copy
 * (for callers that only count it).
 * @example checkRecord(record, []) // { ok: true, record } or { ok: false, reasons: [...] }
 */
export function checkRecord(record: unknown, already: readonly RejectReason[] | null, keep = true): RecordCheck {
  if (!keep && isStagedCounterparty(record)) return ACCEPTED;
  const result = checkStagedCounterparty(record);
  if (result.ok) return result;
  const reasons: RejectReason[] = [];
  for (const e of result.errors) {
    // "addresses.0.postalCode" in zod terms is "addresses[0].postalCode" in mapping terms
    const field = e.field.replace(/\.(\d+)(?=\.|$)/g, '[$1]');
    if (refusedAlready(already, field)) continue;
    const value = valueAt(record, e.field);
    const expected = wrongType(record, e.field, value);
    const message =
      e.message === 'MISSING_REQUIRED_FIELD'
        ? `${field}: required by staging, got nothing`
        : expected
          ? `${field}: expected ${expected}, got ${kindOf(value)}`
          : `${field}: refused by the staging schema, got ${showValue(value)}`;
    reasons.push({ field, value: cutValue(value), code: e.message, message });
  }
  return reasons.length > 0 ? { ok: false, reasons } : { ok: false, reasons: [] };
}

const ACCEPTED: RecordCheck = Object.freeze({ ok: true });

const EXPECTED: Record<TargetKind, string> = { string: 'a string', number: 'a number', boolean: 'true or false' };

/**
 * What staging takes at a field, when the value is of another JSON type (a script's number where
 * staging takes text): "a string". Undefined when the type is right and the refusal is another.
 */
function wrongType(record: unknown, path: string, value: unknown): string | undefined {
  const type = (record as { type?: unknown }).type;
  if (type !== 'person' && type !== 'organisation') return undefined;
  let schema = stagedSchema(type);
  for (const part of path.split('.')) {
    const next = /^\d+$/.test(part) ? itemSchema(schema) : fieldSchema(schema, part);
    if (!next) return undefined;
    schema = next;
  }
  const kind = targetKind(schema);
  return kind !== undefined && typeof value !== kind ? EXPECTED[kind] : undefined;
}

/** Whether an earlier reason already refused this field or one that holds it. */
export function refusedAlready(already: readonly RejectReason[] | null, field: string): boolean {
  return already?.some((r) => r.field === field || field.startsWith(`${r.field}.`) || field.startsWith(`${r.field}[`)) ?? false;
}

/**
 * DUPLICATE_LEGACY_KEY when an earlier row holds the key (`first`: its location, from
 * `KeyIndex.add`, which answers only for a key some row added before). The location is not a
 * row's identity: a minified JSON export has every element on line 1.
 */
export function duplicateReason(
  keyColumn: string,
  scope: string,
  key: string,
  first: KeyLocation | undefined,
  _here: KeyLocation,
  files: readonly string[],
): RejectReason | undefined {
  if (!first) return undefined;
  return {
    field: keyColumn,
    value: key,
    code: 'DUPLICATE_LEGACY_KEY',
    message: `${keyColumn}: duplicate legacy key ${scope} ${key}, first seen at ${files[first.fileIndex]}:${first.line}`,
  };
}

/** RELATION_TARGET_MISSING for each relation to a key no source holds. */
export function missingTargets(refs: readonly RelationRef[], index: KeyIndex): RejectReason[] | undefined {
  let out: RejectReason[] | undefined;
  for (const r of refs) {
    if (index.has(r.scope, r.key)) continue;
    (out ??= []).push({
      field: r.field,
      value: r.key,
      code: 'RELATION_TARGET_MISSING',
      message: `${r.field}: no source holds ${r.scope} ${r.key} (column ${r.column}), expected the key of a row in this pipeline`,
    });
  }
  return out;
}
