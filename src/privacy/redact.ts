/**
 * The redactor: one decision, made where a report or a message is written (never per record on
 * the hot path), of how each value is shown. Values of personal fields — by the contract's
 * classification of staged fields, inherited by the legacy columns a mapping reads into them —
 * are masked (default) or hashed with a per-migration key; `revealed` shows them for a local
 * working copy. Legacy keys are shown unless the pipeline says they are personal (a BSN).
 */
import { classOfField, type PersonalClass, type ValuesMode } from '../contract/classification.js';
import { type MaskKind, hashValue, maskValue } from './mask.js';

export interface RedactorOptions {
  mode: ValuesMode;
  /** The per-migration key of `hashed` mode. */
  key?: Buffer;
  /** Class of a staged field path (default: the contract's classification); unknown fields count as personal. */
  classOf?: (field: string) => PersonalClass | undefined;
  /** Legacy keys are personal data themselves (e.g. a citizen service number). */
  keyIsPersonal?: boolean;
}

/** Reasons whose value is a legacy key (a duplicate, a relation's target), shown as legacy keys are. */
const KEY_CODES: ReadonlySet<string> = new Set(['DUPLICATE_LEGACY_KEY', 'RELATION_TARGET_MISSING']);

/** Values in messages stand in backticks (`got \`31-02-1980\``); double quotes name columns and fields. */
const QUOTED = /`([^`]*)`/g;

export class Redactor {
  readonly mode: ValuesMode;
  private readonly key: Buffer | undefined;
  private readonly classOf: (field: string) => PersonalClass | undefined;
  readonly keyIsPersonal: boolean;

  constructor(options: RedactorOptions) {
    this.mode = options.mode;
    this.key = options.key;
    this.classOf = options.classOf ?? classOfField;
    this.keyIsPersonal = options.keyIsPersonal ?? false;
    if (this.mode === 'hashed' && !this.key) throw new TypeError('hashed values need a key');
  }

  /** The class of a field; a field the contract does not name (a whole row, a script's field) is personal. */
  classify(field: string): PersonalClass {
    return this.classOf(field) ?? 'direct';
  }

  /** How one value is shown, given its class. */
  show(value: unknown, cls: PersonalClass): string {
    const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
    if (this.mode === 'revealed' || cls === 'none') return text;
    if (this.mode === 'hashed') return hashValue(text, this.key!);
    return maskValue(text, cls === 'financial' ? ('financial' satisfies MaskKind) : 'text');
  }

  /** A value of a staged field, as shown (`code`: the reason it is shown for, when a legacy key is the value). */
  value(field: string, value: unknown, code?: string): string {
    if (code !== undefined && KEY_CODES.has(code)) return this.legacyKey(typeof value === 'string' ? value : JSON.stringify(value));
    return this.show(value, this.classify(field));
  }

  /**
   * A changed value of a field, before and after, as shown. A mask keeps a word's first letter
   * only, so `Jansen` → `Jensen` would show `J*** → J***`, a change that looks like none: when
   * the two look the same the after side says where they differ (the lengths, or the first
   * character that differs), which tells the change apart without showing a letter of it.
   * @example new Redactor({ mode: 'masked' }).change('surname', 'Jansen', 'Jensen')
   *   // { before: 'J***', after: 'J*** (differs from character 2)' }
   */
  change(field: string, before: unknown, after: unknown): { before: string; after: string } {
    const shown = { before: this.value(field, before), after: this.value(field, after) };
    const raw = [before, after].map((v) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v))));
    const [a, b] = raw as [string, string];
    if (shown.before !== shown.after || a === b) return shown;
    if (a.length !== b.length) return { ...shown, after: `${shown.after} (${b.length} characters, was ${a.length})` };
    let at = 0;
    while (a[at] === b[at]) at++;
    return { ...shown, after: `${shown.after} (differs from character ${at + 1})` };
  }

  /** A legacy key, as shown. */
  legacyKey(key: string): string {
    return this.keyIsPersonal ? this.show(key, 'direct') : key;
  }

  /**
   * A message about `field`, with the values it echoes shown as they would be: for a personal
   * field every part in backticks (where messages echo values), then any other occurrence of
   * the known value (three characters or more: a one-letter code would hit ordinary words).
   * @example r.message('dateOfBirth: no such day, got `31-02-1980`', 'dateOfBirth') // '… got `**-**-19**`'
   */
  message(message: string, field: string, value?: unknown, code?: string): string {
    const cls = code !== undefined && KEY_CODES.has(code) ? (this.keyIsPersonal ? 'direct' : 'none') : this.classify(field);
    if (this.mode === 'revealed' || cls === 'none') return message;
    const out = message.replace(QUOTED, (whole, inner: string) => {
      if (inner === '') return whole;
      const q = whole[0]!;
      return `${q}${this.show(inner, cls)}${q}`;
    });
    if (value === undefined || value === null) return out;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    return text.length >= 3 && out.includes(text) ? out.split(text).join(this.show(text, cls)) : out;
  }

  /** A legacy row as `column → value`, each value shown by what its column feeds. */
  row(values: Record<string, unknown>, columnClass: (column: string) => PersonalClass, keyColumn?: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [column, value] of Object.entries(values)) {
      const text = typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value);
      if (column === keyColumn) out[column] = this.legacyKey(text);
      else out[column] = text === '' ? '' : this.show(text, columnClass(column));
    }
    return out;
  }

  /** A sentence for the head of a report or a printout: which values it shows. */
  describe(): string {
    if (this.mode === 'revealed') return 'Values revealed: this copy shows personal data in the clear; keep it local.';
    if (this.mode === 'hashed')
      return "Values of personal fields are hashed (HMAC with this migration's key): equal values give equal tokens.";
    return 'Values of personal fields are masked; write a local working copy with --reveal.';
  }
}

/** The redactor that shows everything: for callers that have no privacy settings (tests, `map`). */
export const REVEAL_ALL = new Redactor({ mode: 'revealed' });
