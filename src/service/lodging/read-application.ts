/**
 * Reads a sent CleanOrder message: turns CleanOrderCounterparties.xml into staged-counterparty
 * records and checks what the XSDs cannot check alone — references between files (applicants,
 * owners, insured persons, collaterals, documents), the sum of the loan parts against the total
 * and their currency, and every mapped record against the staged-counterparty contract. Each
 * problem names the file, the line and the element.
 *
 * Counterparty referenceIds are UUID v5 of tenant, process and the document-local id, so
 * handling the same message again (after a restart) writes the same counterparties, while the
 * same local id in another application ("P1") never collides.
 */
import { v5 as uuidv5 } from 'uuid';
import { XmlElement, type XmlDocument } from 'libxml2-wasm';
import { checkStagedCounterparty, type StagedCounterparty } from '../../contract/migration.js';
import { WELL_KNOWN_ATTACHMENTS } from '../../contract/process.js';
import { HttpProblem } from '../http/problem.js';
import type { HandlingError } from './store-messages.js';
import { parseXmlSafely } from './xml-validation.js';

/** Namespace of lodged counterparty and address referenceIds (a fixed random UUID). */
const LODGED_NAMESPACE = '46505cae-87d1-493b-8e60-64da3a020a8b';

type WellKnown = (typeof WELL_KNOWN_ATTACHMENTS)[number];

export interface ApplicationInput {
  brokerKey: string;
  processId: string;
  /** Bytes of the well-known files that were attached. */
  files: Map<string, Buffer>;
  /** Names of every attachment of the message. */
  attachmentNames: readonly string[];
}

export interface ApplicationReading {
  counterparties: StagedCounterparty[];
  errors: HandlingError[];
}

/**
 * The referenceId a lodged counterparty (or, with `sub`, one of its addresses) gets.
 * @example lodgedReferenceId('demo-broker', processId, 'P1') // same UUID every time
 */
export function lodgedReferenceId(brokerKey: string, processId: string, localId: string, sub?: string): string {
  return uuidv5(`${brokerKey}/${processId}/counterparty/${localId}${sub ? `/${sub}` : ''}`, LODGED_NAMESPACE);
}

// --- tiny reader over libxml2 elements ------------------------------------------------------

function elements(el: XmlElement, name?: string): XmlElement[] {
  const out: XmlElement[] = [];
  for (let c = el.firstChild; c; c = c.next) if (c instanceof XmlElement && (name === undefined || c.name === name)) out.push(c);
  return out;
}
const first = (el: XmlElement | undefined, name: string): XmlElement | undefined => (el ? elements(el, name)[0] : undefined);
const text = (el: XmlElement | undefined, name: string): string | undefined => {
  const found = first(el, name);
  return found === undefined ? undefined : found.content.trim();
};
const attr = (el: XmlElement, name: string): string | undefined => el.attr(name)?.value;
const cents = (value: string): number => Math.round(Number(value) * 100);
const money = (c: number): string => (c / 100).toFixed(2);

/**
 * Reads and cross-checks the well-known files of one message.
 * @example const { counterparties, errors } = readApplication({ brokerKey, processId, files, attachmentNames });
 */
export function readApplication(input: ApplicationInput): ApplicationReading {
  const errors: HandlingError[] = [];
  const docs = new Map<WellKnown, XmlDocument>();
  try {
    for (const name of WELL_KNOWN_ATTACHMENTS) {
      const bytes = input.files.get(name);
      if (!bytes) continue;
      try {
        docs.set(name, parseXmlSafely(name, bytes));
      } catch (err) {
        if (!(err instanceof HttpProblem)) throw err;
        errors.push({ code: err.code, fileName: name, field: 'document', message: err.message });
      }
    }
    const root = (name: WellKnown) => docs.get(name)?.root;
    const fail = (code: string, fileName: WellKnown, el: XmlElement, field: string, message: string) =>
      errors.push({ code, fileName, field, line: el.line, message: `line ${el.line}: ${message}` });

    // Counterparties: the ids the other files refer to, and the records they become.
    const counterpartiesRoot = root('CleanOrderCounterparties.xml');
    const parties = counterpartiesRoot ? elements(counterpartiesRoot).filter((e) => e.name === 'Person' || e.name === 'Organisation') : [];
    const partyIds = new Set(parties.map((p) => attr(p, 'id') ?? ''));
    const counterparties: StagedCounterparty[] = [];
    for (const party of parties) {
      const record = toStagedCounterparty(input.brokerKey, input.processId, party);
      const checked = checkStagedCounterparty(record);
      if (checked.ok) counterparties.push(checked.record);
      else
        for (const e of checked.errors)
          fail(
            e.message,
            'CleanOrderCounterparties.xml',
            party,
            `${party.name}[@id='${attr(party, 'id')}'].${e.field}`,
            `${party.name} ${attr(party, 'id')}: ${e.field} cannot be used (${e.message})`,
          );
    }
    const refToParty = (fileName: WellKnown, el: XmlElement, field: string, ref: string | undefined) => {
      if (ref !== undefined && !partyIds.has(ref)) {
        fail(
          'UNRESOLVED_REFERENCE',
          fileName,
          el,
          field,
          `counterparty "${ref}" is not in CleanOrderCounterparties.xml (ids there: ${[...partyIds].join(', ') || 'none'})`,
        );
      }
    };

    // Collaterals: ids for the financing request, covers and deeds; owners are counterparties.
    const collateralsRoot = root('CleanOrderCollaterals.xml');
    const collateralIds = new Set(collateralsRoot ? elements(collateralsRoot, 'Collateral').map((c) => attr(c, 'id') ?? '') : []);
    const refToCollateral = (fileName: WellKnown, el: XmlElement, field: string, ref: string | undefined) => {
      if (ref === undefined || collateralIds.has(ref)) return;
      const where = collateralsRoot
        ? `is not in CleanOrderCollaterals.xml (ids there: ${[...collateralIds].join(', ')})`
        : 'cannot be resolved: CleanOrderCollaterals.xml is not attached';
      fail('UNRESOLVED_REFERENCE', fileName, el, field, `collateral "${ref}" ${where}`);
    };
    for (const collateral of collateralsRoot ? elements(collateralsRoot, 'Collateral') : []) {
      for (const owner of elements(first(collateral, 'Owners') ?? collateral, 'Owner')) {
        refToParty('CleanOrderCollaterals.xml', owner, 'Owner/@counterpartyRef', attr(owner, 'counterpartyRef'));
      }
    }

    // Financing request: applicants, loan parts against the total, collaterals.
    const request = root('CleanOrderFinancingRequest.xml');
    if (request) {
      for (const applicant of elements(first(request, 'Applicants') ?? request, 'Applicant')) {
        refToParty('CleanOrderFinancingRequest.xml', applicant, 'Applicant/@counterpartyRef', attr(applicant, 'counterpartyRef'));
      }
      const total = first(request, 'TotalLoanAmount');
      const parts = elements(first(request, 'LoanParts') ?? request, 'LoanPart');
      if (total) {
        const currency = attr(total, 'currency');
        let sum = 0;
        for (const part of parts) {
          const principal = first(part, 'Principal');
          if (!principal) continue;
          sum += cents(principal.content.trim());
          if (attr(principal, 'currency') !== currency) {
            fail(
              'INVALID_FIELD_VALUE',
              'CleanOrderFinancingRequest.xml',
              principal,
              'Principal/@currency',
              `loan part ${attr(part, 'number')} is in ${attr(principal, 'currency')}, the total in ${currency}; all loan parts must be in the currency of TotalLoanAmount`,
            );
          }
        }
        if (sum !== cents(total.content.trim())) {
          fail(
            'INVALID_FIELD_VALUE',
            'CleanOrderFinancingRequest.xml',
            total,
            'TotalLoanAmount',
            `TotalLoanAmount ${total.content.trim()} is not the sum of the loan parts' principals (${money(sum)})`,
          );
        }
      }
      for (const ref of elements(request, 'CollateralRef'))
        refToCollateral('CleanOrderFinancingRequest.xml', ref, 'CollateralRef', ref.content.trim());
    }

    const covers = root('CleanOrderCovers.xml');
    for (const cover of covers ? elements(covers, 'Cover') : []) {
      for (const insured of elements(cover, 'InsuredCounterpartyRef'))
        refToParty('CleanOrderCovers.xml', insured, 'InsuredCounterpartyRef', insured.content.trim());
      const collateral = first(cover, 'CollateralRef');
      if (collateral) refToCollateral('CleanOrderCovers.xml', collateral, 'CollateralRef', collateral.content.trim());
    }

    const deeds = root('CleanOrderDeedPassing.xml');
    for (const deed of deeds ? elements(first(deeds, 'Deeds') ?? deeds, 'Deed') : []) {
      const collateral = first(deed, 'CollateralRef');
      if (collateral) refToCollateral('CleanOrderDeedPassing.xml', collateral, 'CollateralRef', collateral.content.trim());
    }

    const questionnaire = root('AnsweredQuestionnaire.xml');
    const respondent = first(questionnaire, 'RespondentRef');
    if (respondent) refToParty('AnsweredQuestionnaire.xml', respondent, 'RespondentRef', respondent.content.trim());

    const documents = root('DocumentManagementFileDocuments.xml');
    for (const document of documents ? elements(documents, 'Document') : []) {
      const fileName = first(document, 'FileName');
      const name = fileName?.content.trim();
      if (fileName && name !== undefined && !input.attachmentNames.includes(name)) {
        fail(
          'UNRESOLVED_REFERENCE',
          'DocumentManagementFileDocuments.xml',
          fileName,
          'Document/FileName',
          `document "${name}" is not attached to this message`,
        );
      }
      const party = first(document, 'CounterpartyRef');
      if (party) refToParty('DocumentManagementFileDocuments.xml', party, 'Document/CounterpartyRef', party.content.trim());
    }

    return { counterparties, errors };
  } finally {
    for (const doc of docs.values()) doc.dispose();
  }
}

/** A Person or Organisation element as a staged-counterparty record (not yet checked). */
function toStagedCounterparty(brokerKey: string, processId: string, el: XmlElement): Record<string, unknown> {
  const localId = attr(el, 'id') ?? '';
  const id = (ref: string) => lodgedReferenceId(brokerKey, processId, ref);
  const addresses = elements(first(el, 'Addresses') ?? el, 'Address').map((a, i) => {
    const addition = text(a, 'HouseNumberAddition');
    return {
      referenceId: lodgedReferenceId(brokerKey, processId, localId, `address/${i + 1}`),
      type: attr(a, 'type') ?? 'main',
      addressLine1: `${text(a, 'Street')} ${text(a, 'HouseNumber')}${addition ? ` ${addition}` : ''}`,
      postalCode: text(a, 'PostalCode'),
      locality: text(a, 'City'),
      countryCode: text(a, 'CountryCode'),
    };
  });
  const telephoneNumbers = elements(first(el, 'TelephoneNumbers') ?? el, 'TelephoneNumber').map((t) => ({
    type: attr(t, 'type'),
    number: t.content.trim(),
  }));
  const relations = elements(first(el, 'Relations') ?? el, 'Relation').map((r) => ({ to: id(attr(r, 'to') ?? ''), type: attr(r, 'type') }));
  const common = {
    referenceId: id(localId),
    isActive: true,
    countryCode: addresses[0]?.countryCode,
    emailAddress: text(el, 'EmailAddress'),
    telephoneNumbers: telephoneNumbers.length ? telephoneNumbers : undefined,
    addresses,
    relations: relations.length ? relations : undefined,
    externalReferences: [{ origin: 'lodging', referenceId: `${processId}/${localId}` }],
  };
  if (el.name === 'Organisation') {
    return {
      ...common,
      type: 'organisation',
      organisationName: text(el, 'OrganisationName'),
      cocNumber: text(el, 'CocNumber'),
      countryOfIncorporation: text(el, 'CountryOfIncorporation'),
    };
  }
  const income = first(el, 'Income');
  return {
    ...common,
    type: 'person',
    salutation: text(el, 'Salutation'),
    initials: text(el, 'Initials'),
    firstName: text(el, 'FirstName'),
    surnamePrefix: text(el, 'SurnamePrefix'),
    surname: text(el, 'Surname'),
    sex: text(el, 'Sex'),
    dateOfBirth: text(el, 'DateOfBirth'),
    nationalities: elements(first(el, 'Nationalities') ?? el, 'Nationality').map((n) => n.content.trim()),
    preferredCommunicationLanguage: text(el, 'PreferredLanguage'),
    income: income
      ? { amount: Number(income.content.trim()), currency: attr(income, 'currency'), frequency: attr(income, 'frequency') }
      : undefined,
  };
}
