/**
 * A row's verdict before upload, in two halves. The first (`mapAndCheck`) needs only the row: its
 * key, its mapping, the staging schema; it runs wherever the row is read (this thread, or a
 * parallel reader's worker). The second (`settleRow`) needs every row before it, in source order:
 * a duplicate is the later of two rows, and a relation's target must be a key some source holds.
 */
import { cutText, showValue } from '../../contract/cut.js';
import type { FrontRow, MappedRow, RejectReason, SourceRow, SourceRowError } from '../types.js';
import type { CompiledMapping, MapContext, RelationRef } from '../mapping/compile.js';
import type { KeyIndex } from './key-index.js';
import { checkRecord, duplicateReason, missingTargets, refusedAlready, type RecordCheck } from './check-record.js';

/**
 * The first half of a row's checks, the part that needs only the row: its key, its mapping, the
 * staging schema. Runs wherever the row is read (this thread, or a parallel reader's worker).
 * `final` rows are rejected whatever the other rows hold (no key, the mapping threw).
 */
export type RowVerdict =
  | { kind: 'final'; row: Extract<MappedRow, { kind: 'rejected' }> }
  | {
      kind: 'checked';
      legacyKey: string;
      referenceId: string;
      /** Refusals the mapping made (a code it does not know, a date it cannot read). */
      mappingReasons: RejectReason[] | null;
      /** Relations to other legacy keys, for the missing-target check (a copy: ctx.refs is reused). */
      refs: RelationRef[];
      check: RecordCheck;
    };

/** Longest legacy key (characters) a row may have. */
export const MAX_KEY_CHARS = 1024;

export function mapAndCheck(mapping: CompiledMapping, row: SourceRow, ctx: MapContext, keepRecord = true): RowVerdict {
  const key = mapping.key(row.values);
  if (key === undefined) {
    const reasons: RejectReason[] = [
      {
        field: mapping.keyColumn,
        value: row.values[mapping.keyColumn] ?? '',
        code: 'MISSING_REQUIRED_FIELD',
        message: `${mapping.keyColumn}: the legacy key is empty, expected a value to derive the referenceId from`,
      },
    ];
    return { kind: 'final', row: { kind: 'rejected', component: 'Counterparties', reasons, row } };
  }
  if (key.length > MAX_KEY_CHARS) {
    // The key becomes the referenceId and the ledger's key: a runaway column must not.
    const reasons: RejectReason[] = [
      {
        field: mapping.keyColumn,
        value: cutText(key),
        code: 'INVALID_FIELD_VALUE',
        message: `${mapping.keyColumn}: the legacy key is ${key.length} characters, expected at most ${MAX_KEY_CHARS}, got ${showValue(key)}`,
      },
    ];
    return { kind: 'final', row: { kind: 'rejected', component: 'Counterparties', reasons, row } };
  }
  ctx.reasons = null;
  ctx.refs.length = 0;
  ctx.key = key;
  let mapped: ReturnType<CompiledMapping['map']>;
  try {
    mapped = mapping.map(row.values, ctx);
  } catch (err) {
    return {
      kind: 'final',
      row: {
        kind: 'rejected',
        component: 'Counterparties',
        legacyKey: key,
        reasons: [{ field: '', code: 'MAPPING_FAILED', message: `the mapping failed: ${(err as Error).message}` }],
        row,
      },
    };
  }
  const mappingReasons = ctx.reasons;
  const check = checkRecord(mapped.record, mappingReasons, keepRecord);
  return {
    kind: 'checked',
    legacyKey: key,
    referenceId: mapped.referenceId,
    mappingReasons,
    refs: ctx.refs.length > 0 ? ctx.refs.slice() : [],
    check: check.ok ? check : { ok: false, reasons: check.reasons.map((r) => withTrace(mapping, r)) },
  };
}

/** A staging refusal with how the mapping made the refused value (a rejected row only: the rare path). */
function withTrace(mapping: CompiledMapping, r: RejectReason): RejectReason {
  const trace = mapping.explain(r.field, r.value);
  return trace === undefined ? r : { ...r, trace };
}

/** What the second half of the checks consults: every legacy key, and where each first appeared. */
export interface KeyChecks {
  index: KeyIndex;
  /** Where duplicates are looked up when not in `index` (corrections: only among themselves). */
  duplicates: KeyIndex | undefined;
  rejectMissing: boolean;
  files: readonly string[];
}

/** What the second half needs of a row's first half (from `mapAndCheck`, here or on a worker). */
export interface SettleInput {
  key: string;
  fileIndex: number;
  line: number;
  refs: readonly RelationRef[];
  mappingReasons?: RejectReason[] | null | undefined;
  checkReasons?: RejectReason[] | null | undefined;
}

/**
 * The second half, in source order (a duplicate is the later of two rows): the row's key goes
 * into the index; a duplicate, relations to keys no source holds, and the schema's refusals of
 * fields not already refused join the mapping's reasons. Null when the row is clean.
 */
export function settleRow(mapping: CompiledMapping, verdict: SettleInput, keys: KeyChecks): RejectReason[] | null {
  const { key, fileIndex, line, refs } = verdict;
  const mappingReasons = verdict.mappingReasons ?? null;
  const checkReasons = verdict.checkReasons ?? null;
  let reasons = mappingReasons === null ? null : mappingReasons.slice();
  const first = (keys.duplicates ?? keys.index).add(mapping.scope, key, fileIndex, line);
  const dup = duplicateReason(mapping.keyColumn, mapping.scope, key, first, { fileIndex, line }, keys.files);
  if (dup) (reasons ??= []).push(dup);
  if (keys.rejectMissing && refs.length > 0) {
    const missing = missingTargets(refs, keys.index);
    if (missing) (reasons ??= []).push(...missing);
  }
  if (checkReasons === null) return reasons;
  const before = reasons;
  return [...(reasons ?? []), ...checkReasons.filter((r) => !refusedAlready(before, r.field))];
}

/** Both halves at once, where a row is mapped on the thread that settles it (`rowChecker`). */
export type CheckRow = (mapping: CompiledMapping, row: SourceRow, fileIndex: number, keys: KeyChecks) => FrontRow;

/**
 * Both halves on this thread, in source order (the one-thread reader, a corrections file): the
 * row mapped, or rejected with every reason. The rows share one `MapContext`.
 */
export function rowChecker(keepRecords: boolean): CheckRow {
  const ctx: MapContext = { reasons: null, refs: [], key: '' };
  return (mapping, row, fileIndex, keys) => {
    const v = mapAndCheck(mapping, row, ctx, keepRecords);
    if (v.kind === 'final') return v.row;
    const reasons = settleRow(
      mapping,
      {
        key: v.legacyKey,
        fileIndex,
        line: row.provenance.line,
        refs: v.refs,
        mappingReasons: v.mappingReasons,
        checkReasons: v.check.ok ? null : v.check.reasons,
      },
      keys,
    );
    if (reasons === null && v.check.ok)
      return {
        kind: 'mapped',
        component: 'Counterparties',
        legacyKey: v.legacyKey,
        referenceId: v.referenceId,
        ...(v.check.record ? { record: v.check.record } : {}),
        row,
      };
    return {
      kind: 'rejected',
      component: 'Counterparties',
      legacyKey: v.legacyKey,
      referenceId: v.referenceId,
      reasons: reasons ?? [],
      row,
    };
  };
}

/** A row the source could not read, as a rejected row. */
export function rejectUnreadable(row: SourceRowError): Extract<MappedRow, { kind: 'rejected' }> {
  return {
    kind: 'rejected',
    component: 'Counterparties',
    reasons: [{ field: '', ...(row.raw !== undefined ? { value: row.raw } : {}), code: row.code, message: row.message }],
    row,
  };
}
