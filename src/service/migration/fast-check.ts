/**
 * A faster check of staged counterparties for the common case, derived from the contract's
 * zod schema at start: staging calls it for every record and falls back to the full
 * `checkStagedCounterparty` (zod) whenever it does not accept a record, so error results come
 * from zod alone. When it accepts, its output equals zod's — same fields, same order, unknown
 * fields dropped — which test/service/migration-fast-check.test.ts holds it to.
 *
 * Why: zod's generic parse costs about as much per record as JSON.parse, a third of the
 * staging CPU budget. The compiler knows only the constructs the staged schemas use (object
 * with stripped extras, optional, string with min/exact length or a regex format, number,
 * boolean, literal, array, record of unknown values, discriminated union); meeting anything
 * else, it gives up and staging uses zod for every record, so a change to the contract can
 * make staging slower but never different.
 */
import type { z } from 'zod';
import { stagedCounterpartySchema, type StagedCounterparty } from '../../contract/migration.js';

/** Returned by a compiled check that does not accept its input. */
const NO = Symbol('no');
type Check = (value: unknown) => unknown;

interface Def {
  type: string;
  format?: string;
  pattern?: RegExp;
  checks?: Array<{ _zod: { def: { check: string; minimum?: number; length?: number } } }>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  values?: unknown[];
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  discriminator?: string;
}

class Unsupported extends Error {}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

function compile(schema: z.ZodType): Check {
  const def = defOf(schema);
  switch (def.type) {
    case 'string': {
      const tests: Array<(s: string) => boolean> = [];
      if (def.format !== undefined) {
        // Formats that are a regular expression and nothing more.
        if ((def.format !== 'uuid' && def.format !== 'date') || !(def.pattern instanceof RegExp)) throw new Unsupported(`string format ${def.format}`);
        const pattern = def.pattern;
        tests.push((s) => pattern.test(s));
      }
      for (const check of def.checks ?? []) {
        const c = check._zod.def;
        if (c.check === 'min_length' && typeof c.minimum === 'number') tests.push((s) => s.length >= c.minimum!);
        else if (c.check === 'length_equals' && typeof c.length === 'number') tests.push((s) => s.length === c.length);
        else throw new Unsupported(`string check ${c.check}`);
      }
      return (v) => (typeof v === 'string' && tests.every((t) => t(v)) ? v : NO);
    }
    case 'number':
      if (def.checks?.length) throw new Unsupported('number checks');
      return (v) => (typeof v === 'number' && Number.isFinite(v) ? v : NO);
    case 'boolean':
      return (v) => (typeof v === 'boolean' ? v : NO);
    case 'literal': {
      const values = def.values ?? [];
      if (!values.every((x) => typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean')) throw new Unsupported('literal');
      return (v) => (values.some((x) => x === v) ? v : NO);
    }
    case 'optional': {
      const inner = compile(def.innerType!);
      return (v) => (v === undefined ? undefined : inner(v));
    }
    case 'array': {
      if (def.checks?.length) throw new Unsupported('array checks');
      const element = compile(def.element!);
      return (v) => {
        if (!Array.isArray(v)) return NO;
        const out = new Array<unknown>(v.length);
        for (let i = 0; i < v.length; i++) {
          const e = element(v[i]);
          if (e === NO) return NO;
          out[i] = e;
        }
        return out;
      };
    }
    case 'object': {
      if (def.catchall !== undefined || def.checks?.length) throw new Unsupported('object with catchall or checks');
      const fields = Object.entries(def.shape!).map(([key, s]) => [key, compile(s)] as const);
      return (v) => {
        if (!isPlainObject(v)) return NO;
        const out: Record<string, unknown> = {};
        for (const [key, check] of fields) {
          const value = (v as Record<string, unknown>)[key];
          const checked = check(value);
          if (checked === NO) return NO;
          if (checked !== undefined) out[key] = checked;
        }
        return out;
      };
    }
    case 'record': {
      if (defOf(def.keyType!).type !== 'string' || defOf(def.keyType!).checks?.length || defOf(def.valueType!).type !== 'unknown') throw new Unsupported('record');
      return (v) => {
        // "__proto__" behaves differently on assignment: leave such records to zod.
        if (!isPlainObject(v) || Object.hasOwn(v, '__proto__')) return NO;
        return { ...v };
      };
    }
    case 'union': {
      if (!def.discriminator) throw new Unsupported('union without discriminator');
      const key = def.discriminator;
      const byValue = new Map<unknown, Check>();
      for (const option of def.options!) {
        const literal = defOf(option).shape?.[key];
        if (!literal || defOf(literal).type !== 'literal') throw new Unsupported('discriminator');
        for (const value of defOf(literal).values!) byValue.set(value, compile(option));
      }
      return (v) => {
        if (!isPlainObject(v)) return NO;
        const check = byValue.get((v as Record<string, unknown>)[key]);
        return check ? check(v) : NO;
      };
    }
    default:
      throw new Unsupported(def.type);
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Why the fast check is off, when it is (for the log). */
export let fastCheckDisabledBecause: string | undefined;

const compiled: Check | undefined = (() => {
  try {
    return compile(stagedCounterpartySchema as unknown as z.ZodType);
  } catch (err) {
    if (!(err instanceof Unsupported)) throw err;
    fastCheckDisabledBecause = `the staged-counterparty schema uses ${err.message}, which the fast check does not know`;
    return undefined;
  }
})();

/**
 * The record as `checkStagedCounterparty` would return it, or undefined when the fast check
 * does not accept it (then ask `checkStagedCounterparty`, which also explains why).
 * @example fastCheckStagedCounterparty(JSON.parse(line)) ?? checkStagedCounterparty(JSON.parse(line))
 */
export function fastCheckStagedCounterparty(input: unknown): StagedCounterparty | undefined {
  if (!compiled) return undefined;
  const out = compiled(input);
  return out === NO ? undefined : (out as StagedCounterparty);
}
