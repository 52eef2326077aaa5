/**
 * Fixtures of the migration tests: staged counterparty records with deterministic
 * referenceIds, and small HTTP helpers for the migration endpoints (raw fetch, no client).
 */
import { encodeFrame, type StreamFormat } from '../../../src/codec/index.js';
import { call } from '../../support/service.js';

/** A deterministic UUID v4-shaped id: id(1) = 00000000-0000-4000-8000-000000000001. */
export const id = (n: number, prefix = '00000000') => `${prefix}-0000-4000-8000-${String(n).padStart(12, '0')}`;

export function person(n: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    referenceId: id(n),
    type: 'person',
    isActive: true,
    initials: 'P.',
    firstName: `Piet${n}`,
    surname: `Persoon${n}`,
    dateOfBirth: '1980-01-01',
    nationalities: ['NL'],
    income: { amount: 3000, currency: 'EUR', frequency: 'Monthly' },
    addresses: [{ referenceId: id(n, 'aaaaaaaa'), type: 'main', addressLine1: 'Straat 1', postalCode: '1000 AA', locality: 'Amsterdam', countryCode: 'NL' }],
    ...extra,
  };
}

export function organisation(n: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { referenceId: id(n), type: 'organisation', organisationName: `Bedrijf ${n} B.V.`, cocNumber: `1000${n}`, countryOfIncorporation: 'NL', ...extra };
}

export function frames(format: StreamFormat, records: unknown[]): string {
  return records.map((r) => encodeFrame(format, r)).join('');
}

export const MEDIA_SEQ = 'application/json-seq';
export const MEDIA_JSONL = 'application/jsonl';

export function stagingPath(migrationId: string): string {
  return `/counterparty-management/migrations/${migrationId}/staging/counterparties`;
}

/** Registers a migration (components default to Counterparties) and returns its id. */
export async function createMigration(url: string, token: string, components: string[] = ['Counterparties']): Promise<string> {
  const res = await call(url, token, 'POST', '/migration-assistance/migrations', { body: { components } });
  if (res.status !== 201) throw new Error(`create migration: ${res.status} ${res.text}`);
  return res.body.referenceId as string;
}

/** Stages records as json-seq and returns the parsed results (one per record). */
export async function stage(url: string, token: string, migrationId: string, records: unknown[], format: StreamFormat = 'json-seq'): Promise<any[]> {
  const res = await call(url, token, 'PUT', stagingPath(migrationId), {
    raw: frames(format, records),
    headers: { 'content-type': format === 'jsonl' ? MEDIA_JSONL : MEDIA_SEQ, accept: 'application/json' },
  });
  if (res.status !== 200) throw new Error(`staging: ${res.status} ${res.text}`);
  return res.body as any[];
}

/** Starts a job (validate-staging, import, counts) and polls it to its result. */
export async function runJob(url: string, token: string, migrationId: string, job: 'validate-staging' | 'import' | 'counts'): Promise<any> {
  const started = await call(url, token, 'PUT', `/migration-assistance/migrations/${migrationId}/jobs/${job}`);
  if (started.status !== 200) throw new Error(`start ${job}: ${started.status} ${started.text}`);
  return pollJob(url, token, started.body as string);
}

export async function pollJob(url: string, token: string, jobId: string): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const res = await call(url, token, 'GET', `/migration-assistance/jobs/${jobId}`);
    if (res.status === 200) return res.body;
    if (res.status !== 202) throw new Error(`poll job: ${res.status} ${res.text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${jobId} still running after 30 s`);
}
