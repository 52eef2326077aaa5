/**
 * Compiles a mapping declaration into plain functions once, before any row is read, so the hot
 * path runs no interpreter: each expression becomes a function `(values, ctx) => value`, each
 * transform a step with its formats and regular expressions already built. Per row the only
 * allocations are the record itself and, when something is wrong, the reject reasons.
 */
import type { RejectReason } from '../types.js';
import type { StagedCounterparty } from '../../contract/migration.js';
import type { Condition, Expr, MappingFile, Transform } from './schema.js';
import {
  compileTransform,
  initials,
  normaliseEmail,
  normalisePhone,
  titleCase,
  TransformFailure,
  type Step,
  type CodeTables,
} from './transforms.js';
import type { ReferenceIds } from './reference-ids.js';
import { loadMappingScript, type MappingHelpers } from './load-script.js';

export type { MappingHelpers, MappingScript } from './load-script.js';

export type Values = Record<string, unknown>;

/** A relation a mapped record makes to another legacy key (checked before upload). */
export interface RelationRef {
  field: string;
  column: string;
  scope: string;
  key: string;
}

/** Per-row scratch state, reused from row to row by one reader. */
export interface MapContext {
  reasons: RejectReason[] | null;
  refs: RelationRef[];
  /** The row's own legacy key (set before the record is built). */
  key: string;
}

type Eval = (values: Values, ctx: MapContext) => unknown;
interface Compiled {
  run: Eval;
  /** True when the value does not depend on the row (a constant, the row's own ids). */
  constant: boolean;
}

export interface CompiledMapping {
  /** Mapping file, as given (for messages). */
  file: string;
  type: MappingFile['type'];
  scope: string;
  keyColumn: string;
  /** Every legacy column the mapping reads (checked against a CSV header). */
  columns: ReadonlySet<string>;
  /** Legacy key of a row, or `undefined` when the key column is empty. */
  key(values: Values): string | undefined;
  /** Builds the staged record. Reasons and relations land in `ctx`. */
  map(values: Values, ctx: MapContext): { referenceId: string; record: StagedCounterparty };
  ids: ReferenceIds;
}

const isEmpty = (v: unknown): boolean => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
const cellText = (v: unknown): string => (v === undefined || v === null ? '' : typeof v === 'string' ? v.trim() : String(v));

function reject(ctx: MapContext, reason: RejectReason): void {
  (ctx.reasons ??= []).push(reason);
}

/** Longest text a mapped column may hold (the service refuses a whole record over 1 MiB). */
export const MAX_FIELD_CHARS = 65_536;

function describeValue(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return `\`${s && s.length > 60 ? `${s.slice(0, 57)}…` : s}\``;
}

/** Reads a nested value by its path, when the row has no flat key of that name. */
function readPath(values: Values, column: string, parts: readonly string[]): unknown {
  if (column in values) return values[column];
  let cur: unknown = values;
  for (const p of parts) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Values)[p];
  }
  return cur;
}

/** Reads a column; dotted names reach into nested JSON objects when no such flat key exists. */
function accessor(column: string): (values: Values) => unknown {
  if (!column.includes('.')) return (values) => values[column];
  const parts = column.split('.');
  return (values) => readPath(values, column, parts);
}

/** Fills an object's fields from their expressions; true when a row-dependent field had a value. */
type Filler = (values: Values, ctx: MapContext, out: Record<string, unknown>) => boolean;

/** Fills an object's fields in declaration order, leaving out fields whose value is undefined. */
function fieldFiller(fields: ReadonlyArray<{ name: string } & Compiled>): Filler {
  const runs = fields.map((f) => f.run);
  const names = fields.map((f) => f.name);
  const constants = fields.map((f) => f.constant);
  return (values, ctx, out) => {
    let any = false;
    for (let i = 0; i < runs.length; i++) {
      const v = runs[i]!(values, ctx);
      if (v === undefined) continue;
      out[names[i]!] = v;
      if (!constants[i]) any = true;
    }
    return any;
  };
}

class Compiler {
  readonly columns = new Set<string>();
  constructor(
    private readonly codes: CodeTables,
    private readonly ids: ReferenceIds,
    private readonly scope: string,
    private readonly file: string,
  ) {}

  fail(field: string, message: string): never {
    throw new Error(`${this.file}: field ${field}: ${message}`);
  }

  condition(when: Condition | Condition[] | undefined): ((values: Values) => boolean) | undefined {
    if (when === undefined) return undefined;
    const list = (Array.isArray(when) ? when : [when]).map((c) => {
      this.columns.add(c.column);
      const get = accessor(c.column);
      if (c.notEmpty) return (v: Values) => cellText(get(v)) !== '';
      if (c.empty) return (v: Values) => cellText(get(v)) === '';
      if (c.in) {
        const set = new Set(c.in.map(String));
        return (v: Values) => set.has(cellText(get(v)));
      }
      const expected = String(c.equals);
      return (v: Values) => cellText(get(v)) === expected;
    });
    if (list.length === 1) return list[0];
    return (v) => list.every((f) => f(v));
  }

  /** Runs transforms in order; empty values skip them, failures become reasons. */
  chain(transforms: Transform[], field: string, sourceLabel: string): ((v: unknown, ctx: MapContext) => unknown) | undefined {
    if (transforms.length === 0) return undefined;
    let steps: { step: Step; acceptsEmpty: boolean }[];
    try {
      steps = transforms.map((t) => compileTransform(t, this.codes));
    } catch (err) {
      this.fail(field, (err as Error).message);
    }
    const fns = steps.map((st) => st.step);
    const acceptsEmpty = steps.map((st) => st.acceptsEmpty);
    return (input: unknown, ctx: MapContext): unknown => {
      let v = input;
      for (let i = 0; i < fns.length; i++) {
        if (isEmpty(v) && !acceptsEmpty[i]) continue;
        const out = fns[i]!(v);
        if (out instanceof TransformFailure) {
          reject(ctx, {
            field,
            value: input,
            code: out.code,
            message: `${field}: ${out.message}, got ${describeValue(input)}${sourceLabel}`,
          });
          return undefined;
        }
        v = out;
      }
      return v;
    };
  }

  expr(e: Expr, field: string): Compiled {
    const when = this.condition(e.when);
    const inner = this.exprInner(e, field);
    if (!when) return inner;
    const run = inner.run;
    return { run: (values, ctx) => (when(values) ? run(values, ctx) : undefined), constant: false };
  }

  private required(run: Eval, field: string, label: string, required: boolean): Eval {
    if (!required) return run;
    return (values, ctx) => {
      const v = run(values, ctx);
      // A value refused on the way (too long, a failed transform) is not also "missing".
      if (isEmpty(v) && !ctx.reasons?.some((r) => r.field === field))
        reject(ctx, { field, value: v ?? '', code: 'MISSING_REQUIRED_FIELD', message: `${field}: required, got nothing${label}` });
      return v;
    };
  }

  private exprInner(e: Expr, field: string): Compiled {
    if ('column' in e) {
      this.columns.add(e.column);
      const get = accessor(e.column);
      const label = ` in column ${e.column}`;
      const chain = this.chain(e.transforms, field, label);
      const run: Eval = (values, ctx) => {
        let raw = get(values);
        if (typeof raw === 'string' && raw.length > MAX_FIELD_CHARS) {
          // No staged field is this long; refusing it here keeps a runaway value (a 10 MB column of a
          // broken export) out of the transforms, the reasons and the ledger.
          reject(ctx, {
            field,
            value: `${raw.slice(0, 57)}…`,
            code: 'INVALID_FIELD_VALUE',
            message: `${field}: ${raw.length} characters, expected at most ${MAX_FIELD_CHARS}${label}`,
          });
          raw = undefined;
        }
        return chain ? chain(typeof raw === 'string' ? raw : (raw ?? ''), ctx) : raw;
      };
      return { run: this.required(this.emptyToUndefined(run), field, label, e.required), constant: false };
    }
    if ('value' in e) {
      const value = e.value;
      return { run: () => value, constant: true };
    }
    if ('concat' in e) {
      const parts = e.concat.map((p) => this.expr(p, field).run);
      const sep = e.separator;
      const label = '';
      const chain = this.chain(e.transforms, field, label);
      const joined: Eval = (values, ctx) => {
        let out = '';
        for (const p of parts) {
          const v = p(values, ctx);
          if (isEmpty(v)) continue;
          out = out ? out + sep + cellText(v) : cellText(v);
        }
        return chain ? chain(out, ctx) : out;
      };
      return { run: this.required(this.emptyToUndefined(joined), field, label, e.required), constant: false };
    }
    if ('first' in e) {
      const options = e.first.map((p) => this.expr(p, field).run);
      const chain = this.chain(e.transforms, field, '');
      const first: Eval = (values, ctx) => {
        for (const o of options) {
          const v = o(values, ctx);
          if (!isEmpty(v)) return chain ? chain(v, ctx) : v;
        }
        return undefined;
      };
      return { run: this.required(this.emptyToUndefined(first), field, '', e.required), constant: false };
    }
    if ('object' in e) {
      const entries = Object.entries(e.object).map(([name, sub]) => ({ name, ...this.expr(sub, field ? `${field}.${name}` : name) }));
      const fill = fieldFiller(entries);
      // An object whose row-dependent fields are all empty is left out (an address with no data).
      const run: Eval = (values, ctx) => {
        const out: Record<string, unknown> = {};
        return fill(values, ctx, out) ? out : undefined;
      };
      return { run, constant: false };
    }
    if ('list' in e) {
      const items = e.list.map((item, i) => this.expr(item, `${field}[${i}]`).run);
      const run: Eval = (values, ctx) => {
        let out: unknown[] | undefined;
        for (const item of items) {
          const v = item(values, ctx);
          if (v !== undefined) (out ??= []).push(v);
        }
        return out;
      };
      return { run, constant: false };
    }
    const { column, scope = this.scope, suffix, transforms } = e.referenceId;
    const ids = this.ids;
    if (column === undefined) {
      // The row's own id, or a sub-entity's (scope:key#suffix).
      return {
        run: (_values, ctx) => ids.of(scope, ctx.key, suffix),
        constant: true,
      };
    }
    this.columns.add(column);
    const get = accessor(column);
    const chain = this.chain(transforms, field, ` in column ${column}`);
    const run: Eval = (values, ctx) => {
      const raw = cellText(get(values));
      const key = chain ? cellText(chain(raw, ctx)) : raw;
      if (key === '') return undefined;
      ctx.refs.push({ field, column, scope, key });
      return ids.of(scope, key, suffix);
    };
    return { run, constant: false };
  }

  private emptyToUndefined(run: Eval): Eval {
    return (values, ctx) => {
      const v = run(values, ctx);
      return v === '' || v === null ? undefined : v;
    };
  }
}

/**
 * Compiles a validated mapping file. `file` is the mapping's path (scripts load relative to it).
 * @example const m = await compileMapping(spec, 'mappings/counterparties/crm-persons.yaml', ids);
 *          m.map(row.values, ctx)
 */
export async function compileMapping(spec: MappingFile, file: string, ids: ReferenceIds): Promise<CompiledMapping> {
  const compiler = new Compiler(spec.codes, ids, spec.key.scope, file);
  const keyColumn = spec.key.column;
  compiler.columns.add(keyColumn);
  const getKey = accessor(keyColumn);
  const keyChain = compiler.chain(spec.key.transforms, 'key', ` in column ${keyColumn}`);
  const scratch: MapContext = { reasons: null, refs: [], key: '' };
  const key = (values: Values): string | undefined => {
    const raw = cellText(getKey(values));
    const k = keyChain ? cellText(keyChain(raw, scratch)) : raw;
    scratch.reasons = null;
    return k === '' ? undefined : k;
  };

  const fill = fieldFiller(Object.entries(spec.record).map(([name, e]) => ({ name, ...compiler.expr(e, name) })));
  const type = spec.type;
  const scope = spec.key.scope;

  const script = spec.script ? await loadMappingScript(file, spec.script) : undefined;
  let current: MapContext = scratch;
  const helpers: MappingHelpers = {
    referenceId: (s, k, suffix) => ids.of(s, k, suffix),
    reject: (field, code, message, value) => reject(current, { field, value, code, message }),
    relation: (field, s, k) => {
      current.refs.push({ field, column: '(script)', scope: s, key: k });
      return ids.of(s, k);
    },
    initials,
    titleCase,
    normalisePhone,
    normaliseEmail,
  };

  return {
    file,
    type,
    scope,
    keyColumn,
    columns: compiler.columns,
    key,
    ids,
    map(values, ctx) {
      const referenceId = ids.of(scope, ctx.key);
      let record: Record<string, unknown> = { referenceId, type };
      fill(values, ctx, record);
      if (script) {
        current = ctx;
        try {
          const out = script(values, record, helpers);
          if (out && typeof out === 'object') record = out;
        } catch (err) {
          reject(ctx, {
            field: '',
            code: 'MAPPING_FAILED',
            message: `the mapping script ${spec.script} failed: ${(err as Error).message}`,
          });
        }
      }
      return { referenceId, record: record as StagedCounterparty };
    },
  };
}
