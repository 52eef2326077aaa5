/**
 * Demo counterparties: a few persons and organisations per tenant, written once on the first
 * start (source 'seed'), so the list, the stream and the counterparty events have something to
 * show before any migration. Their referenceIds are UUID v5 of the tenant and a name, the same
 * on every machine.
 */
import { v5 as uuidv5 } from 'uuid';
import type { StagedCounterparty } from '../../contract/migration.js';
import type { Db } from '../store/database.js';
import { createCounterpartyTables, upsertLiveCounterparties } from './store.js';

/** Namespace of the seed referenceIds (a fixed random UUID). */
const SEED_NAMESPACE = '5f0c8a86-3c36-4a0e-9f7e-2b8f3c1d9a41';

/** The referenceId of demo counterparty `key` of a tenant. */
export function seedReferenceId(brokerKey: string, key: string): string {
  return uuidv5(`${brokerKey}/${key}`, SEED_NAMESPACE);
}

/** The demo counterparties of one tenant, in sequence order. */
export function demoCounterparties(brokerKey: string): StagedCounterparty[] {
  const id = (key: string) => seedReferenceId(brokerKey, key);
  const address = (key: string, addressLine1: string, postalCode: string, locality: string) => ({
    referenceId: id(`address/${key}`),
    type: 'main',
    addressLine1,
    postalCode,
    locality,
    countryCode: 'NL',
  });
  return [
    {
      referenceId: id('person/ada'),
      type: 'person',
      isActive: true,
      salutation: 'Mrs',
      initials: 'A.',
      firstName: 'Ada',
      surname: 'Seedling',
      sex: 'female',
      dateOfBirth: '1971-03-14',
      nationalities: ['NL'],
      emailAddress: 'ada.seedling@example.org',
      income: { amount: 64000, currency: 'EUR', frequency: 'yearly' },
      telephoneNumbers: [{ type: 'mobile', number: '+31600000001' }],
      addresses: [address('ada', 'Demostraat 1', '1000 AA', 'Amsterdam')],
      relations: [{ to: id('person/bram'), type: 'isSignificantOtherOf' }],
    },
    {
      referenceId: id('person/bram'),
      type: 'person',
      isActive: true,
      salutation: 'Mr',
      initials: 'B.J.',
      firstName: 'Bram',
      surnamePrefix: 'van',
      surname: 'Seedling',
      sex: 'male',
      dateOfBirth: '1969-11-02',
      nationalities: ['NL', 'BE'],
      income: { amount: 3900, currency: 'EUR', frequency: 'monthly' },
      addresses: [address('bram', 'Demostraat 1', '1000 AA', 'Amsterdam')],
      relations: [{ to: id('person/ada'), type: 'isSignificantOtherOf' }],
    },
    {
      referenceId: id('person/chris'),
      type: 'person',
      isActive: true,
      initials: 'C.',
      firstName: 'Chris',
      surname: 'Sampleton',
      dateOfBirth: '1990-07-21',
      nationalities: ['DE'],
      countryCode: 'DE',
      preferredCommunicationLanguage: 'de-DE',
    },
    {
      referenceId: id('organisation/bakery'),
      type: 'organisation',
      isActive: true,
      organisationName: 'Demo Bakery B.V.',
      cocNumber: '99000001',
      countryOfIncorporation: 'NL',
      telephoneNumbers: [{ type: 'office', number: '+31200000001' }],
      addresses: [address('bakery', 'Oventje 7', '3500 BB', 'Utrecht')],
    },
    {
      referenceId: id('organisation/holding'),
      type: 'organisation',
      isActive: true,
      organisationName: 'Demo Holding N.V.',
      cocNumber: '99000002',
      countryOfIncorporation: 'NL',
    },
  ];
}

/**
 * Seeds every tenant that was never seeded. Runs at registration; a tenant is seeded once,
 * even if its counterparties are later merged or the seed changes.
 */
export function seedDemoCounterparties(db: Db): void {
  createCounterpartyTables(db);
  db.exec('CREATE TABLE IF NOT EXISTS live_counterparty_seeds (broker_key TEXT PRIMARY KEY, seeded_on TEXT NOT NULL)');
  const tenants = db
    .prepare('SELECT broker_key FROM tenants WHERE broker_key NOT IN (SELECT broker_key FROM live_counterparty_seeds) ORDER BY broker_key')
    .pluck()
    .all() as string[];
  if (tenants.length === 0) return;
  db.transaction(() => {
    for (const brokerKey of tenants) {
      upsertLiveCounterparties(db, brokerKey, demoCounterparties(brokerKey), 'seed');
      db.prepare('INSERT INTO live_counterparty_seeds (broker_key, seeded_on) VALUES (?, ?)').run(brokerKey, new Date().toISOString());
    }
  })();
}
