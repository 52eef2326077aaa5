/**
 * Says which legacy row a `DUPLICATE_IDENTITY` from validation repeats. The platform refuses
 * the later of two staged records with one identity and names the kept one by referenceId
 * (`duplicateOf`) and the identity they share; the ledger maps the referenceId back to its legacy
 * key and row. The identity is personal data: it is shown masked. A platform that refuses every
 * record of the group names one that it refused as well: the message then says so and claims no
 * kept row. A platform that names no other record gets the fields only, as before.
 */
import type { Ledger } from '../ledger/index.js';
import { maskValue } from '../privacy/mask.js';
import type { ValidationFinding } from './relation-targets.js';

export interface DuplicateFinding extends ValidationFinding {
  duplicateOf?: string | undefined;
  identity?: string | undefined;
}

const isDuplicate = (e: DuplicateFinding) => (e.code ?? e.message.trim()) === 'DUPLICATE_IDENTITY';

/**
 * Rewrites each `DUPLICATE_IDENTITY` that names the kept record into a message naming its row,
 * its advice after ' — ' (as the corrections file expects); other findings pass unchanged.
 * @example explainDuplicates(ledger, v.errors)
 *   // 'same surname, initials and dateOfBirth (`d* V**** B. 19**-**-**`) as record 100012 (klanten.csv:14),
 *   //  staged first and kept — if both rows are one person, drop this one; if not, correct the identity'
 */
export function explainDuplicates<T extends DuplicateFinding>(ledger: Ledger, findings: readonly T[]): T[] {
  const named = findings.filter((e) => isDuplicate(e) && e.duplicateOf);
  if (named.length === 0) return [...findings];
  const others = new Map(ledger.recordsByReferenceIds(new Set(named.map((e) => e.duplicateOf!))).map((r) => [r.referenceId!, r]));
  // A record the platform refused for its identity too was not kept, whatever "duplicateOf" suggests.
  const refused = new Set(findings.filter(isDuplicate).map((e) => e.referenceId));
  return findings.map((e) => {
    if (!isDuplicate(e) || !e.duplicateOf) return e;
    const what = e.field === 'cocNumber' ? 'cocNumber' : 'surname, initials and dateOfBirth';
    const party = e.field === 'cocNumber' ? 'organisation' : 'person';
    const other = others.get(e.duplicateOf);
    const whom = other
      ? `record ${other.legacyKey ?? e.duplicateOf} (${other.provenance.file}:${other.provenance.line})`
      : `record ${e.duplicateOf}, which no row of the pipelines in this ledger holds`;
    const identity = e.identity ? ` (\`${maskValue(e.identity)}\`)` : '';
    const message = refused.has(e.duplicateOf)
      ? `same ${what}${identity} as ${whom}, which the platform refused as well (it keeps no record of a shared identity) — if the rows are one ${party}, remove all but one of them; if not, correct the identity`
      : `same ${what}${identity} as ${whom}, staged first and kept — if both rows are one ${party}, drop this one; if not, correct the identity`;
    return { ...e, code: 'DUPLICATE_IDENTITY', message };
  });
}
