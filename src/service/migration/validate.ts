/**
 * What a validation job checks in one staged counterparty beyond the shape staging already
 * enforced: codes that are not in the service's configuration (UNKNOWN_CODE), fields the
 * platform needs to import the record (MISSING_REQUIRED_FIELD) and relations to counterparties
 * in neither staging nor live data (RELATION_TARGET_MISSING). Duplicate identities need the
 * whole staging area and are found by the job (jobs.ts).
 */
import type { StagedCounterparty } from '../../contract/migration.js';
import { CODE_LISTS, type CodeList } from './codes.js';

export type ValidationCode = 'UNKNOWN_CODE' | 'MISSING_REQUIRED_FIELD' | 'RELATION_TARGET_MISSING' | 'DUPLICATE_IDENTITY';

export interface ValidationIssue {
  field: string;
  message: ValidationCode;
  /** Human wording for the log: what is wrong and what was expected. */
  detail: string;
}

/**
 * @example
 *   checkStagedRecord(record, (id) => stagedOrLive(id))
 *   // [{ field: 'nationalities.0', message: 'UNKNOWN_CODE', detail: 'nationality "XX" is not configured' }]
 */
export function checkStagedRecord(record: StagedCounterparty, relationTargetExists: (referenceId: string) => boolean): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const code = (field: string, value: string | undefined, list: CodeList) => {
    if (value !== undefined && !list.has(value)) {
      issues.push({ field, message: 'UNKNOWN_CODE', detail: `${list.name} "${value}" is not configured in the service` });
    }
  };
  const required = (field: string, value: unknown, why: string) => {
    if (value === undefined || value === '')
      issues.push({ field, message: 'MISSING_REQUIRED_FIELD', detail: `${field} is required: ${why}` });
  };

  code('countryCode', record.countryCode, CODE_LISTS.country);
  code('preferredCommunicationLanguage', record.preferredCommunicationLanguage, CODE_LISTS.language);
  record.telephoneNumbers?.forEach((t, i) => {
    required(`telephoneNumbers.${i}.type`, t.type, 'the type of a telephone number decides how it is used');
    code(`telephoneNumbers.${i}.type`, t.type, CODE_LISTS.telephoneType);
  });
  record.addresses?.forEach((a, i) => {
    code(`addresses.${i}.type`, a.type, CODE_LISTS.addressType);
    code(`addresses.${i}.countryCode`, a.countryCode, CODE_LISTS.country);
  });
  if (record.type === 'person') {
    record.nationalities?.forEach((n, i) => code(`nationalities.${i}`, n, CODE_LISTS.nationality));
    code('sex', record.sex, CODE_LISTS.sex);
    if (record.income) {
      code('income.currency', record.income.currency, CODE_LISTS.currency);
      code('income.frequency', record.income.frequency, CODE_LISTS.incomeFrequency);
    }
  } else {
    required('countryOfIncorporation', record.countryOfIncorporation, 'a chamber-of-commerce number means nothing without its country');
    code('countryOfIncorporation', record.countryOfIncorporation, CODE_LISTS.country);
  }
  record.relations?.forEach((r, i) => {
    code(`relations.${i}.type`, r.type, CODE_LISTS.relationType);
    if (!relationTargetExists(r.to)) {
      issues.push({
        field: `relations.${i}.to`,
        message: 'RELATION_TARGET_MISSING',
        detail: `relation ${r.type} targets ${r.to}, which is in neither staging nor live data`,
      });
    }
  });
  return issues;
}
