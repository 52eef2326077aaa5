/**
 * Data alterations: the embedded service imports some counterparties *differently* from how
 * they were staged, on purpose, the way a real platform can (a column 30 characters wide, a
 * second telephone number dropped, a birth date moved by a time zone, accents lost, a record
 * lost after import). They exist so that `stagecoach verify` can be tested against a platform
 * that changes data; off by default. docs/fault-injection.md, "Data alterations".
 *
 *   spec   := rule (";" rule)*
 *   rule   := field ":" action [":p=" probability]
 *   action := truncate=<chars> | drop-item | shift-date=<days> | strip-accents | lose   (lose: field "*")
 *
 * Which records a rule alters does not depend on the order the import takes them in: a rule
 * fires for a record when a hash of (seed, rule number, referenceId) falls below p, so the same
 * seed alters the same records in every run. A rule that would change nothing (a short surname,
 * no accents, an empty list) is not counted. Every alteration that took effect is kept, in order,
 * for tests to compare against (`GET /_admin/faults/alterations`).
 */
import { createHash } from 'node:crypto';
import { StagecoachError } from '../../contract/errors.js';
import type { StagedCounterparty } from '../../contract/migration.js';
import type { ServiceContext } from '../context.js';

export type AlterationKind = 'truncate' | 'drop-item' | 'shift-date' | 'strip-accents' | 'lose';

export interface AlterationRule {
  text: string;
  field: string;
  kind: AlterationKind;
  p: number;
  /** truncate: characters kept; shift-date: days added. */
  amount?: number;
}

/** One alteration that took effect. */
export interface Alteration {
  rule: string;
  referenceId: string;
  field: string;
}

/** Alterations kept for the admin endpoint; beyond this only the count grows. */
const KEPT = 1_000_000;

/**
 * Parses an alteration spec; empty is none. Throws CONFIG_INVALID naming the rule.
 * @example parseAlterations('surname:truncate=30;*:lose:p=0.01') // two rules
 */
export function parseAlterations(spec: string | undefined): AlterationRule[] {
  if (!spec?.trim()) return [];
  return spec
    .split(';')
    .map((r) => r.trim())
    .filter(Boolean)
    .map((text, i) => {
      const bad = (what: string) =>
        new StagecoachError(
          'CONFIG_INVALID',
          `alteration ${i + 1} \`${text}\`: ${what}; expected e.g. "surname:truncate=30:p=0.5" (docs/fault-injection.md)`,
          { field: 'alterations', value: text },
        );
      const [field = '', action = '', ...rest] = text.split(':').map((s) => s.trim());
      if (!/^(\*|[A-Za-z][A-Za-z0-9]*)$/.test(field)) throw bad(`"${field}" is not a top-level field name or *`);
      const [kind, value] = action.split('=') as [string, string | undefined];
      let p = 1;
      for (const setting of rest) {
        const m = /^p=(.*)$/.exec(setting);
        const n = m ? Number(m[1]) : Number.NaN;
        if (!m || m[1] === '' || !Number.isFinite(n) || n < 0 || n > 1) throw bad(`"${setting}" is not p=<probability from 0 to 1>`);
        p = n;
      }
      const whole = (what: string, signed: boolean) => {
        if (value === undefined || !(signed ? /^[+-]?\d+$/ : /^\d+$/).test(value)) throw bad(`${kind} needs ${what}, got "${value ?? ''}"`);
        return Number(value);
      };
      switch (kind) {
        case 'truncate':
          return { text, field, kind, p, amount: whole('a whole number of characters (truncate=30)', false) };
        case 'shift-date':
          return { text, field, kind, p, amount: whole('a whole number of days (shift-date=-1)', true) };
        case 'drop-item':
        case 'strip-accents':
        case 'lose':
          if (value !== undefined) throw bad(`${kind} takes no value`);
          if ((kind === 'lose') !== (field === '*'))
            throw bad(kind === 'lose' ? 'lose applies to a whole record: write *:lose' : `${kind} needs a field, not *`);
          return { text, field, kind, p };
        default:
          throw bad(`unknown action "${kind}" (known: truncate=, drop-item, shift-date=, strip-accents, lose)`);
      }
    });
}

/** The alterations in force on one service, and what they did. */
export class Alterations {
  readonly rules: AlterationRule[];
  readonly done: Alteration[] = [];
  count = 0;

  constructor(
    readonly spec: string | undefined,
    readonly seed: number,
  ) {
    this.rules = parseAlterations(spec);
  }

  get active(): boolean {
    return this.rules.length > 0;
  }

  /** The record as the platform keeps it, or undefined when it is lost. The input is not changed. */
  apply(record: StagedCounterparty): StagedCounterparty | undefined {
    let out = record as unknown as Record<string, unknown>;
    for (const [n, rule] of this.rules.entries()) {
      if (!this.fires(n, rule, record.referenceId)) continue;
      if (rule.kind === 'lose') {
        this.note(rule, record.referenceId, '*');
        return undefined;
      }
      const before = out[rule.field];
      const after = alter(rule, before);
      if (after === undefined || JSON.stringify(after) === JSON.stringify(before)) continue;
      out = { ...out, [rule.field]: after };
      this.note(rule, record.referenceId, rule.field);
    }
    return out as unknown as StagedCounterparty;
  }

  private fires(n: number, rule: AlterationRule, referenceId: string): boolean {
    if (rule.p >= 1) return true;
    const h = createHash('sha256').update(`${this.seed}:${n}:${referenceId}`).digest();
    return h.readUInt32BE(0) / 2 ** 32 < rule.p;
  }

  private note(rule: AlterationRule, referenceId: string, field: string): void {
    this.count++;
    if (this.done.length < KEPT) this.done.push({ rule: rule.text, referenceId, field });
  }
}

/** The altered value, or undefined when the rule does not apply to it. */
function alter(rule: AlterationRule, value: unknown): unknown {
  switch (rule.kind) {
    case 'truncate':
      return typeof value === 'string' && [...value].length > rule.amount! ? [...value].slice(0, rule.amount).join('') : undefined;
    case 'strip-accents':
      return typeof value === 'string'
        ? value
            .normalize('NFKD')
            .replace(/[\u0300-\u036f]/g, '')
            .normalize('NFC')
        : undefined;
    case 'drop-item':
      return Array.isArray(value) && value.length > 0 ? value.slice(0, -1) : undefined;
    case 'shift-date': {
      if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
      const d = new Date(`${value}T00:00:00Z`);
      d.setUTCDate(d.getUTCDate() + rule.amount!);
      return d.toISOString().slice(0, 10);
    }
    default:
      return undefined;
  }
}

const byContext = new WeakMap<ServiceContext, Alterations>();

/** The alterations of a running service (from `config.alterations`, seeded by `config.faultSeed`). */
export function alterationsOf(ctx: ServiceContext): Alterations {
  let a = byContext.get(ctx);
  if (!a) byContext.set(ctx, (a = new Alterations(ctx.config.alterations, ctx.config.faultSeed)));
  return a;
}
