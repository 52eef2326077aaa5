/**
 * What `verify` says about the forms the platform holds the data in, beside whether it is the
 * data: how many records came in another form than sent (the same data, contract/canonical-form.ts:
 * UUIDs in upper case, text in NFD, a date in another ISO 8601 form, an amount as a string), and
 * which values the platform holds that the records did not carry ("added by the platform": a
 * default country or language), with examples. Records with added values are not counted as
 * identical: what was sent is all there, but the platform holds more than it was sent.
 */
import type { Redactor } from '../../privacy/index.js';
import { RECORDS_LISTED, type PlatformForms, type VerifiedRecordRef } from './verification-model.js';

/** Live records whose referenceId came in another form (upper case): their id was read as the ledger's before pairing. */
export const ID_IN_OTHER_FORM = new WeakSet<object>();

export class FormsTally {
  private readonly forms: PlatformForms = { otherForm: { records: 0, fields: {} }, added: { records: 0, fields: {}, examples: [] } };

  constructor(private readonly redactor: Redactor) {}

  /** A record proven or compared identical, `fields` of it in another form (none: nothing to note). */
  otherForm(live: object, fields: readonly string[]): void {
    const all = ID_IN_OTHER_FORM.has(live) && !fields.includes('referenceId') ? [...fields, 'referenceId'] : fields;
    if (all.length === 0) return;
    this.forms.otherForm.records++;
    for (const f of all) this.forms.otherForm.fields[f] = (this.forms.otherForm.fields[f] ?? 0) + 1;
  }

  /** A record holding `fields` it was not sent with; true when there were any (the record is then not identical). */
  added(live: Record<string, unknown>, fields: readonly string[], refOf: () => VerifiedRecordRef): boolean {
    if (fields.length === 0) return false;
    const a = this.forms.added;
    a.records++;
    let ref: VerifiedRecordRef | undefined;
    for (const field of fields) {
      a.fields[field] = (a.fields[field] ?? 0) + 1;
      if (a.examples.length >= RECORDS_LISTED) continue;
      ref ??= refOf();
      a.examples.push({ ...ref, legacyKey: this.redactor.legacyKey(ref.legacyKey), field, held: this.redactor.value(field, live[field]) });
    }
    return true;
  }

  /** The tallies, examples in export order. */
  report(): PlatformForms {
    this.forms.added.examples.sort(
      (x, y) => x.pipeline.localeCompare(y.pipeline) || x.file.localeCompare(y.file) || x.line - y.line || x.field.localeCompare(y.field),
    );
    return this.forms;
  }
}
