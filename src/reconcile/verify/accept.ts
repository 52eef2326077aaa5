/**
 * Known platform normalisations a migration lead accepts, so that `verify` passes when the
 * platform changes values in a way that was agreed (a surname column 30 characters wide):
 *
 *   rule := field ":" ( truncate=<chars> | strip-accents | case | any )
 *
 * given with `--accept <rule>` (repeatable) or one rule a line in `--accept-file <file>` (`#`
 * starts a comment). A field difference a rule explains is counted "accepted", shown in the
 * report with the rule, and does not fail the verification; any other difference does.
 * docs/reconciliation.md, "Accepting known normalisations".
 */
import { readFileSync } from 'node:fs';
import { StagecoachError } from '../../contract/errors.js';

export interface AcceptRule {
  text: string;
  field: string;
  kind: 'truncate' | 'strip-accents' | 'case' | 'any';
  chars?: number;
}

const stripAccents = (s: string) =>
  s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .normalize('NFC');

/**
 * Parses accept rules; `origin` names where they came from in an error.
 * @example parseAcceptRules(['surname:truncate=30']) // [{ text: 'surname:truncate=30', field: 'surname', kind: 'truncate', chars: 30 }]
 */
export function parseAcceptRules(texts: readonly string[], origin = '--accept'): AcceptRule[] {
  return texts.map((raw, i) => {
    const text = raw.trim();
    const m = /^([A-Za-z][A-Za-z0-9]*):(truncate=(\d+)|strip-accents|case|any)$/.exec(text);
    if (!m)
      throw new StagecoachError(
        'CONFIG_INVALID',
        `accept rule ${i + 1} of ${origin}: expected <field>:truncate=<chars>, <field>:strip-accents, <field>:case or <field>:any, got \`${text}\``,
        { field: 'accept', value: text },
      );
    const kind = (m[3] !== undefined ? 'truncate' : m[2]) as AcceptRule['kind'];
    return { text, field: m[1]!, kind, ...(m[3] !== undefined ? { chars: Number(m[3]) } : {}) };
  });
}

/** The rules of an accept file: one a line, blank lines and `#` comments skipped. */
export function readAcceptFile(file: string): AcceptRule[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new StagecoachError('CONFIG_INVALID', `cannot read the accept file ${file}: ${(err as Error).message}`, { file });
  }
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.replace(/#.*/, '').trim())
    .filter(Boolean);
  return parseAcceptRules(lines, file);
}

/**
 * The rule that explains a field's difference, if any.
 * @example acceptedBy(rules, 'surname', 'Vermeulen-Achterberg', 'Vermeulen-Achter') // the surname:truncate=16 rule
 */
export function acceptedBy(rules: readonly AcceptRule[], field: string, sent: unknown, held: unknown): AcceptRule | undefined {
  for (const r of rules) {
    if (r.field !== field) continue;
    if (r.kind === 'any') return r;
    if (typeof sent !== 'string' || typeof held !== 'string') continue;
    if (r.kind === 'truncate' && [...sent].length > r.chars! && held === [...sent].slice(0, r.chars).join('')) return r;
    if (r.kind === 'strip-accents' && held === stripAccents(sent)) return r;
    if (r.kind === 'case' && held.toLowerCase() === sent.toLowerCase()) return r;
  }
  return undefined;
}
