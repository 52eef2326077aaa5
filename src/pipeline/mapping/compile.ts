/**
 * Compiles a mapping declaration into plain functions once, before any row is read, so the hot
 * path runs no interpreter: each expression becomes a function `(values, ctx) => value`, each
 * transform a step with its formats and regular expressions already built. Per row the only
 * allocations are the record itself and, when something is wrong, the reject reasons.
 */
import type { RejectReason } from '../types.js';
import type { StagedCounterparty } from '../../contract/migration.js';
import type { z } from 'zod';
import {
  fieldSchema,
  itemSchema,
  stagedSchema,
  targetKind,
  type Condition,
  type EachExpr,
  type Expr,
  type MappingFile,
  type TargetKind,
  type Transform,
} from './schema.js';
import { coerceTo, describeValue } from './coerce.js';
import {
  compileTransform,
  transformLabel,
  initials,
  normaliseEmail,
  normalisePhone,
  titleCase,
  TransformFailure,
  type CompiledStep,
  type CodeTables,
} from './transforms.js';
import { PhoneAnswers, type PhoneQuestions } from './transforms/phone.js';
import type { ReferenceIds } from './reference-ids.js';
import { loadMappingScript, type MappingHelpers } from './load-script.js';
import { cutText, cutValue } from '../../contract/cut.js';

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
  /** Index of the array item an `each` is reading (for `{index}` in a suffix). */
  item?: number;
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
  /**
   * How a refused field's value was made, for `plan`: the field's declared chain and the value
   * staging refused (`addresses[1].postalCode` finds `addresses[*].postalCode` of an `each`).
   * @example m.explain('addresses[0].houseNumber', 3) // 'column "adres.huisnummer" → `3` → refused by staging'
   */
  explain(field: string, value: unknown): string | undefined;
  /**
   * The mapping's phone numbers, to be parsed ahead of mapping (parallel/phone-worker.ts);
   * `undefined` when it reads none. `ask` adds the parses a row's numbers will need; `answers`
   * takes those of the batch about to be mapped.
   */
  phones: { ask(values: Values, questions: PhoneQuestions): void; answers: PhoneAnswers } | undefined;
}

const isEmpty = (v: unknown): boolean => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
const cellText = (v: unknown): string => (v === undefined || v === null ? '' : typeof v === 'string' ? v.trim() : String(v));

function reject(ctx: MapContext, reason: RejectReason): void {
  (ctx.reasons ??= []).push(reason);
}

/** Longest text a mapped column may hold (the service refuses a whole record over 1 MiB). */
export const MAX_FIELD_CHARS = 65_536;

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

/**
 * Reads a column; dotted names reach into nested JSON objects when no such flat key exists, a
 * number into an array (`adressen.0.straat`, also written `adressen[0].straat`). Inside an
 * `each`, `.` is the array item itself (an array of plain values).
 */
function accessor(column: string): (values: Values) => unknown {
  if (column === '.' || !/[.[]/.test(column)) return (values) => values[column];
  const parts = column.replace(/\[(\d+)\]/g, '.$1').split('.');
  return (values) => readPath(values, column, parts);
}

/** Stands, in an `each`'s field names, for the index of the output item, and in its column names for the array item's. */
const ITEM_FIELD = '[*]';
const ITEM_COLUMN = '[#]';

/** `s` with the last `token` replaced by `[n]` (the innermost `each` fills its own). */
function fillLast(s: string, token: string, n: number): string {
  const at = s.lastIndexOf(token);
  return at < 0 ? s : `${s.slice(0, at)}[${n}]${s.slice(at + token.length)}`;
}

/** How a value was made, step by step, for a refusal's trace: `column "x" \`a\` → trim → \`b\` → …`. */
function traceSteps(origin: string, input: unknown, labels: readonly string[], values: readonly unknown[], last: string): string {
  let out = `${origin} ${describeValue(input)}`;
  let shown = input;
  for (let i = 0; i < labels.length; i++) {
    out += ` → ${labels[i]}`;
    // a value is shown where a step changed it
    if (i < values.length && values[i] !== shown) out += ` → ${describeValue((shown = values[i]))}`;
  }
  return `${out} → ${last}`;
}

/** A compiled chain of transforms; `ask`: what its phone step will ask of libphonenumber for an input (PhoneAnswers). */
type Chain = ((v: unknown, ctx: MapContext, values: Values) => unknown) & {
  ask: ((input: unknown, values: Values, questions: PhoneQuestions) => void) | undefined;
};

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

/** What an expression compiles to, besides its function: how the declaration reads in a trace. */
interface CompiledExpr extends Compiled {
  /** `column "achternaam" → collapse-spaces`, for the trace of a value staging refuses. */
  origin?: string;
}

class Compiler {
  readonly columns = new Set<string>();
  /** Declared chain of each field path (`addresses[0].postalCode`, `relations[*].to` in an `each`). */
  readonly origins = new Map<string, string>();
  /** `each` levels around the expression being compiled: its columns are inside the array's items. */
  private within: string[] = [];
  /** Where the phone steps take their parses, and what each row's numbers will ask of it (columns outside an `each`). */
  readonly phones = new PhoneAnswers();
  readonly phoneAsks: ((values: Values, questions: PhoneQuestions) => void)[] = [];

  constructor(
    private readonly codes: CodeTables,
    private readonly ids: ReferenceIds,
    private readonly scope: string,
    private readonly file: string,
    /** The mapping's own country forms (`country.extra`), read the same by every step that reads a country. */
    private readonly countryExtra: Record<string, string> = {},
  ) {}

  fail(field: string, message: string): never {
    throw new Error(`${this.file}: field ${field}: ${message}`);
  }

  /** A column of the row, or inside an `each` of the array item (not a column a CSV header must hold). */
  private read(column: string): { get: (values: Values) => unknown; name: string } {
    if (this.within.length === 0) this.columns.add(column);
    const name = `${this.within.join('')}${column}`;
    // `.`, the item itself, is named as the array item: `telefoons[1]`
    return { get: accessor(column), name: column === '.' ? name.slice(0, -2) : name };
  }

  condition(when: Condition | Condition[] | undefined): ((values: Values) => boolean) | undefined {
    if (when === undefined) return undefined;
    const list = (Array.isArray(when) ? when : [when]).map((c) => {
      const { get } = this.read(c.column);
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

  /**
   * Runs transforms in order; empty values skip them, failures become reasons. `origin` names
   * where the value came from (`column "x"`) in the trace a refusal carries.
   */
  chain(transforms: Transform[], field: string, sourceLabel: string, origin: string): Chain | undefined {
    if (transforms.length === 0) return undefined;
    let steps: CompiledStep[];
    try {
      steps = transforms.map((t) =>
        compileTransform(t, this.codes, (column) => this.read(column), this.phones, { countryExtra: this.countryExtra }),
      );
    } catch (err) {
      this.fail(field, (err as Error).message);
    }
    const fns = steps.map((st) => st.step);
    const acceptsEmpty = steps.map((st) => st.acceptsEmpty);
    const labels = transforms.map(transformLabel);
    /** The value before step `upto` (the steps are pure, so they may be run again), each step's value into `made`; a failure stops. */
    const before = (input: unknown, upto: number, row: Values, made?: unknown[]): unknown => {
      let v = input;
      for (let i = 0; i < upto && !(v instanceof TransformFailure); i++) {
        if (!(isEmpty(v) && !acceptsEmpty[i])) v = fns[i]!(v, row);
        made?.push(v);
      }
      return v;
    };
    /** The trace of a refusal at step `failed`. */
    const trace = (input: unknown, failed: number, row: Values): string => {
      const made: unknown[] = [];
      before(input, failed, row, made);
      return traceSteps(origin, input, labels.slice(0, failed + 1), made, 'refused');
    };
    // What the chain's first phone step will ask of libphonenumber, when the steps before it get that far.
    const phoneAt = steps.findIndex((st) => st.ask !== undefined);
    const askPhone = steps[phoneAt]?.ask;
    const ask: Chain['ask'] =
      askPhone &&
      ((input, values, questions) => {
        const v = before(input, phoneAt, values);
        if (!isEmpty(v) && !(v instanceof TransformFailure)) askPhone(v, values, questions);
      });
    const run = (input: unknown, ctx: MapContext, values: Values): unknown => {
      let v = input;
      for (let i = 0; i < fns.length; i++) {
        if (isEmpty(v) && !acceptsEmpty[i]) continue;
        const out = fns[i]!(v, values);
        if (out instanceof TransformFailure) {
          reject(ctx, {
            field,
            value: cutValue(input),
            code: out.code,
            message: `${field}: ${out.message}, got ${describeValue(input)}${sourceLabel}`,
            trace: trace(input, i, values),
          });
          return undefined;
        }
        v = out;
      }
      return v;
    };
    return Object.assign(run, { ask });
  }

  /**
   * The value as staging takes it at a place of kind `kind` (coerce.ts), or a reason and
   * undefined. `input`: the column's value, for the message and the trace.
   */
  private settle(kind: TargetKind, field: string, label: string, origin: string) {
    return (v: unknown, input: unknown, ctx: MapContext): unknown => {
      if (isEmpty(v)) return v;
      const out = coerceTo(kind, v);
      if (!(out instanceof TransformFailure)) return out;
      const last = `${kind}: refused`;
      reject(ctx, {
        field,
        value: input,
        code: out.code,
        message: `${field}: ${out.message}${label}`,
        trace:
          v === input
            ? `${origin} ${describeValue(input)} → ${last}`
            : `${origin} ${describeValue(input)} → … → ${describeValue(v)} → ${last}`,
      });
      return undefined;
    };
  }

  /** `target`: what staging takes at this place, when known (for coercion and the field names of objects). */
  expr(e: Expr, field: string, target: z.ZodType | undefined): CompiledExpr {
    const when = this.condition(e.when);
    const inner = this.exprInner(e, field, target);
    if (inner.origin !== undefined) this.origins.set(field, inner.origin);
    if (!when) return inner;
    const run = inner.run;
    return { run: (values, ctx) => (when(values) ? run(values, ctx) : undefined), constant: false };
  }

  private required(run: Eval, field: string, label: string, required: boolean, origin: string): Eval {
    if (!required) return run;
    return (values, ctx) => {
      const v = run(values, ctx);
      // A value refused on the way (too long, a failed transform) is not also "missing".
      if (isEmpty(v) && !ctx.reasons?.some((r) => r.field === field))
        reject(ctx, {
          field,
          value: v ?? '',
          code: 'MISSING_REQUIRED_FIELD',
          message: `${field}: required, got nothing${label}`,
          trace: `${origin} → nothing`,
        });
      return v;
    };
  }

  private column(e: Extract<Expr, { column: string }>, field: string, target: z.ZodType | undefined): CompiledExpr {
    const { get, name } = this.read(e.column);
    const label = ` in column ${name}`;
    const origin = `column "${name}"`;
    const chain = this.chain(e.transforms, field, label, origin);
    // A column's text is what its chain reads (a longer one is refused first, a JSON value is rare: parsed when met).
    const askPhone = chain?.ask;
    if (askPhone && this.within.length === 0)
      this.phoneAsks.push((values, questions) => {
        const raw = get(values);
        if (typeof raw === 'string' && raw.length <= MAX_FIELD_CHARS) askPhone(raw, values, questions);
      });
    const kind = targetKind(target);
    const settle = kind ? this.settle(kind, field, label, origin) : undefined;
    // Text read where staging takes a number or a boolean, with no transform that makes one.
    const converts = e.transforms.some((t) => t === 'boolean' || (typeof t === 'object' && 'number' in t));
    const settleText = kind !== undefined && kind !== 'string' && !converts ? settle : undefined;
    const run: Eval = (values, ctx) => {
      let raw = get(values);
      if (typeof raw === 'string') {
        if (raw.length > MAX_FIELD_CHARS) {
          // No staged field is this long; refusing it here keeps a runaway value (a 10 MB column of a
          // broken export) out of the transforms, the reasons and the ledger.
          reject(ctx, {
            field,
            value: cutText(raw),
            code: 'INVALID_FIELD_VALUE',
            message: `${field}: ${raw.length} characters, expected at most ${MAX_FIELD_CHARS}${label}`,
          });
          raw = undefined;
        } else if (settleText) return settleText(chain ? chain(raw, ctx, values) : raw, raw, ctx);
      } else if (settle && raw !== undefined && raw !== null) {
        // A JSON number, boolean, list or object (a CSV cell is always text: this path costs it nothing).
        // A number where staging takes text is its digits before the transforms, which read text.
        const input = kind === 'string' && typeof raw === 'number' ? String(raw) : raw;
        return settle(chain ? chain(input, ctx, values) : input, raw, ctx);
      }
      return chain ? chain(typeof raw === 'string' ? raw : (raw ?? ''), ctx, values) : raw;
    };
    const declared = [origin, ...e.transforms.map(transformLabel)].join(' → ');
    return { run: this.required(this.emptyToUndefined(run), field, label, e.required, declared), constant: false, origin: declared };
  }

  private exprInner(e: Expr, field: string, target: z.ZodType | undefined): CompiledExpr {
    if ('column' in e) return this.column(e, field, target);
    if ('value' in e) {
      // A constant where staging takes text is text (`{ value: 3 }` for a house number).
      const value = targetKind(target) === 'string' && typeof e.value === 'number' ? String(e.value) : e.value;
      return { run: () => value, constant: true, origin: `value ${describeValue(value)}` };
    }
    if ('concat' in e) {
      const parts = e.concat.map((p) => this.expr(p, field, undefined));
      const runs = parts.map((p) => p.run);
      const sep = e.separator;
      const origin = `concat(${parts.map((p) => p.origin ?? '…').join(', ')})`;
      const chain = this.chain(e.transforms, field, '', origin);
      const joined: Eval = (values, ctx) => {
        let out = '';
        for (const p of runs) {
          const v = p(values, ctx);
          if (isEmpty(v)) continue;
          out = out ? out + sep + cellText(v) : cellText(v);
        }
        return chain ? chain(out, ctx, values) : out;
      };
      const declared = [origin, ...e.transforms.map(transformLabel)].join(' → ');
      return { run: this.required(this.emptyToUndefined(joined), field, '', e.required, declared), constant: false, origin: declared };
    }
    if ('first' in e) {
      const options = e.first.map((p) => this.expr(p, field, target));
      const runs = options.map((o) => o.run);
      const origin = `first of (${options.map((o) => o.origin ?? '…').join(' | ')})`;
      const chain = this.chain(e.transforms, field, '', origin);
      const first: Eval = (values, ctx) => {
        for (const o of runs) {
          const v = o(values, ctx);
          if (!isEmpty(v)) return chain ? chain(v, ctx, values) : v;
        }
        return undefined;
      };
      const declared = [origin, ...e.transforms.map(transformLabel)].join(' → ');
      return { run: this.required(this.emptyToUndefined(first), field, '', e.required, declared), constant: false, origin: declared };
    }
    if ('object' in e) {
      const entries = Object.entries(e.object).map(([name, sub]) => ({
        name,
        ...this.expr(sub, field ? `${field}.${name}` : name, fieldSchema(target, name)),
      }));
      const fill = fieldFiller(entries);
      // An object whose row-dependent fields are all empty is left out (an address with no data).
      const run: Eval = (values, ctx) => {
        const out: Record<string, unknown> = {};
        return fill(values, ctx, out) ? out : undefined;
      };
      return { run, constant: false };
    }
    if ('list' in e) {
      const element = itemSchema(target);
      // An `each` among the items adds one item per array item, where it stands.
      const items = e.list.map((item, i) =>
        'each' in item
          ? { kind: 'each' as const, spread: this.each(item, field, element), when: this.condition(item.when) }
          : { kind: 'one' as const, run: this.expr(item, `${field}[${i}]`, element).run },
      );
      const run: Eval = (values, ctx) => {
        let out: unknown[] | undefined;
        for (const item of items) {
          if (item.kind === 'each') {
            if (!item.when || item.when(values)) item.spread(values, ctx, (out ??= []));
            continue;
          }
          const v = item.run(values, ctx);
          if (v !== undefined) (out ??= []).push(v);
        }
        return out !== undefined && out.length > 0 ? out : undefined;
      };
      return { run, constant: false };
    }
    // Undecided: never staged (plan and run stop on it unless told to stage records without it).
    if ('undecided' in e) return { run: () => undefined, constant: false, origin: 'undecided' };
    if ('each' in e) {
      const spread = this.each(e, field, itemSchema(target));
      const run: Eval = (values, ctx) => {
        const out: unknown[] = [];
        spread(values, ctx, out);
        return out.length > 0 ? out : undefined;
      };
      return { run, constant: false };
    }
    return this.referenceId(e, field);
  }

  /**
   * An `each`: appends what each item of the array at `e.each` becomes to `out`. The item's
   * expression is compiled once, its field names holding `[*]` for the output index and its
   * column names `[#]` for the array item's; a reason or relation made while item i is read has
   * them filled in (`relations[1].to … in column bestuurders[2].klantnr`). Items that become
   * nothing are left out.
   */
  private each(e: EachExpr, field: string, element: z.ZodType | undefined): (values: Values, ctx: MapContext, out: unknown[]) => void {
    const { get, name } = this.read(e.each);
    const label = ` in column ${name}`;
    this.within.push(`${e.each}${ITEM_COLUMN}.`);
    const item = this.expr(e.item, `${field}${ITEM_FIELD}`, element).run;
    this.within.pop();
    return (values, ctx, out) => {
      const list = get(values);
      if (isEmpty(list)) return;
      if (!Array.isArray(list)) {
        reject(ctx, {
          field,
          value: list,
          code: 'INVALID_FIELD_VALUE',
          message: `${field}: each reads a list, got ${describeValue(list)}${label}`,
        });
        return;
      }
      const outer = ctx.item;
      for (let i = 0; i < list.length; i++) {
        const it = list[i];
        const reasonsBefore = ctx.reasons?.length ?? 0;
        const refsBefore = ctx.refs.length;
        ctx.item = i;
        const v = item(it !== null && typeof it === 'object' && !Array.isArray(it) ? (it as Values) : { '.': it }, ctx);
        numberItem(ctx, reasonsBefore, refsBefore, out.length, i);
        if (v !== undefined) out.push(v);
      }
      ctx.item = outer;
    };
  }

  private referenceId(e: Extract<Expr, { referenceId: unknown }>, field: string): CompiledExpr {
    const { column, scope = this.scope, suffix, transforms } = e.referenceId;
    const ids = this.ids;
    if (column === undefined) {
      // The row's own id, or a sub-entity's (scope:key#suffix); in an `each`, {index} is the item's.
      if (suffix?.includes('{index}')) {
        if (this.within.length === 0) this.fail(field, "a suffix with {index} needs an each around it: {index} is the array item's index");
        return { run: (_values, ctx) => ids.of(scope, ctx.key, suffix.replaceAll('{index}', String(ctx.item))), constant: true };
      }
      return { run: (_values, ctx) => ids.of(scope, ctx.key, suffix), constant: true };
    }
    const { get, name } = this.read(column);
    const chain = this.chain(transforms, field, ` in column ${name}`, `column "${name}"`);
    const run: Eval = (values, ctx) => {
      const raw = cellText(get(values));
      const key = chain ? cellText(chain(raw, ctx, values)) : raw;
      if (key === '') return undefined;
      ctx.refs.push({ field, column: name, scope, key });
      return ids.of(scope, key, suffix);
    };
    return { run, constant: false, origin: `referenceId of ${scope} in column "${name}"` };
  }

  private emptyToUndefined(run: Eval): Eval {
    return (values, ctx) => {
      const v = run(values, ctx);
      return v === '' || v === null ? undefined : v;
    };
  }
}

/** Fills in the item's indices in the reasons and relations made while one `each` item was read. */
function numberItem(ctx: MapContext, reasonsFrom: number, refsFrom: number, at: number, i: number): void {
  const reasons = ctx.reasons;
  if (reasons)
    for (let k = reasonsFrom; k < reasons.length; k++) {
      const r = reasons[k]!;
      const named = (s: string) => fillLast(fillLast(s, ITEM_FIELD, at), ITEM_COLUMN, i);
      reasons[k] = { ...r, field: named(r.field), message: named(r.message), ...(r.trace !== undefined ? { trace: named(r.trace) } : {}) };
    }
  for (let k = refsFrom; k < ctx.refs.length; k++) {
    const r = ctx.refs[k]!;
    ctx.refs[k] = { ...r, field: fillLast(r.field, ITEM_FIELD, at), column: fillLast(r.column, ITEM_COLUMN, i) };
  }
}

/**
 * Every `country.extra` of a mapping, merged: one table of the mapping's own country forms, so a
 * phone's region column and a postcode's country read `ENG` as the country field does.
 */
function countryExtras(spec: MappingFile): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      node.forEach(walk);
      return;
    }
    const o = node as Record<string, unknown>;
    const country = o.country as { extra?: Record<string, string> } | undefined;
    if (country && typeof country === 'object' && country.extra) Object.assign(out, country.extra);
    for (const v of Object.values(o)) walk(v);
  };
  walk(spec.record);
  return out;
}

/**
 * Compiles a validated mapping file. `file` is the mapping's path (scripts load relative to it).
 * @example const m = await compileMapping(spec, 'mappings/counterparties/crm-persons.yaml', ids);
 *          m.map(row.values, ctx)
 */
export async function compileMapping(spec: MappingFile, file: string, ids: ReferenceIds): Promise<CompiledMapping> {
  const compiler = new Compiler(spec.codes, ids, spec.key.scope, file, countryExtras(spec));
  const keyColumn = spec.key.column;
  compiler.columns.add(keyColumn);
  const getKey = accessor(keyColumn);
  const keyChain = compiler.chain(spec.key.transforms, 'key', ` in column ${keyColumn}`, `column "${keyColumn}"`);
  const scratch: MapContext = { reasons: null, refs: [], key: '' };
  const key = (values: Values): string | undefined => {
    const raw = cellText(getKey(values));
    const k = keyChain ? cellText(keyChain(raw, scratch, values)) : raw;
    scratch.reasons = null;
    return k === '' ? undefined : k;
  };

  const staged = stagedSchema(spec.type);
  const fill = fieldFiller(
    Object.entries(spec.record).map(([name, e]) => ({ name, ...compiler.expr(e, name, fieldSchema(staged, name)) })),
  );
  const type = spec.type;
  const scope = spec.key.scope;
  const origins = compiler.origins;

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

  const asks = compiler.phoneAsks;
  const phones: CompiledMapping['phones'] =
    asks.length === 0
      ? undefined
      : {
          ask: (values, questions) => {
            for (const ask of asks) ask(values, questions);
          },
          answers: compiler.phones,
        };

  return {
    file,
    type,
    scope,
    keyColumn,
    phones,
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
    explain(field, value) {
      const origin = origins.get(field) ?? origins.get(field.replace(/\[\d+\]/g, ITEM_FIELD));
      if (origin === undefined) return undefined;
      return `${origin} → ${value === undefined ? 'nothing' : describeValue(value)} → refused by staging${script ? ' (after the script)' : ''}`;
    },
  };
}

/**
 * Compiles named expressions that do not make a staged record — the elements of an
 * application's XML (src/pipeline/applications/) — with the same expressions, transforms and
 * code tables; there is no staged schema to coerce to, so values keep the type they are read as.
 * @example const f = compileFields({ Surname: { column: achternaam } }, {}, 'crm-aanvraag', file, ids);
 *          f.fill(row.values, ctx) // { Surname: 'Berg' }
 */
export function compileFields(
  fields: Record<string, Expr>,
  codes: MappingFile['codes'],
  scope: string,
  file: string,
  ids: ReferenceIds,
): { columns: ReadonlySet<string>; fill(values: Values, ctx: MapContext): Record<string, unknown> } {
  const compiler = new Compiler(codes, ids, scope, file);
  const filler = fieldFiller(Object.entries(fields).map(([name, e]) => ({ name, ...compiler.expr(e, name, undefined) })));
  return {
    columns: compiler.columns,
    fill(values, ctx) {
      const out: Record<string, unknown> = {};
      filler(values, ctx, out);
      return out;
    },
  };
}
