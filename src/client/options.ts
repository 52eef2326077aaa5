/**
 * Options of the stagecoach client, declared once with their defaults: connection identity,
 * per-group api-versions, undici timeouts, the retry policy and the stream resume budget.
 */
import { z } from 'zod';
import { API_VERSIONS, type VersionedArea } from '../contract/media.js';

export const timeoutsSchema = z
  .object({
    connectMs: z.number().int().positive().default(5_000).describe('TCP/TLS connect timeout'),
    headersMs: z.number().int().positive().default(30_000).describe('Time to wait for response headers'),
    bodyMs: z.number().int().positive().default(60_000).describe('Longest silence while reading a response body'),
  })
  .prefault({});

/**
 * The default budget is time, not a count: a service restart or a deployment takes seconds to a
 * minute, and 6 retries of 0.25 s doubling (the former default) gave up after about 8 s. With
 * waits capped at 10 s, about 20 retries fill the two minutes; 60 never binds before the clock.
 */
export const retrySchema = z
  .object({
    retries: z.number().int().min(0).default(60).describe('Retries per request after the first attempt'),
    baseDelayMs: z.number().int().min(0).default(250).describe('First backoff bound; doubles per retry, full jitter'),
    maxDelayMs: z.number().int().min(0).default(10_000).describe('Largest single wait, also the cap on Retry-After'),
    maxRetryTimeMs: z.number().int().positive().default(120_000).describe('Total time one request may spend retrying'),
  })
  .prefault({});

export const streamSchema = z
  .object({
    maxResumes: z.number().int().min(0).default(8).describe('Resumes in a row without a new record before a stream gives up'),
  })
  .prefault({});

const versionsShape = Object.fromEntries(
  (Object.keys(API_VERSIONS) as VersionedArea[]).map((area) => [
    area,
    z.string().default(API_VERSIONS[area][0]).describe(`api-version sent to ${area}`),
  ]),
) as { [K in VersionedArea]: z.ZodDefault<z.ZodString> };

export const clientOptionsSchema = z.object({
  baseUrl: z.url().describe('Base address of the lending service, e.g. http://127.0.0.1:8787'),
  clientId: z.string().min(1).describe('Client id (HTTP Basic user of the token request)'),
  clientSecret: z.string().min(1).describe('Client secret (HTTP Basic password of the token request)'),
  brokerKey: z.string().min(1).describe('Tenant (broker key) the token is issued for'),
  labelReferenceId: z.string().min(1).describe('White-label reference id the token is issued for'),
  timeouts: timeoutsSchema,
  retry: retrySchema,
  stream: streamSchema,
  versions: z.object(versionsShape).prefault({}).describe('api-version per functional group'),
  redirects: z
    .object({
      max: z
        .number()
        .int()
        .min(0)
        .default(5)
        .describe('Redirects followed per request (GET: 301/302/303/307/308; other methods: 307/308 only, the body sent again)'),
      allowedOrigins: z
        .array(z.string())
        .default([])
        .describe('Origins besides the base URL’s a redirect may lead to (e.g. https://api2.example.com); the token is not sent there'),
    })
    .prefault({}),
});

/** Minimal logger interface (pino fits); the client never passes tokens or secrets to it. */
export interface ClientLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export type ClientOptions = z.input<typeof clientOptionsSchema> & { logger?: ClientLogger };
export type ResolvedClientOptions = z.output<typeof clientOptionsSchema> & { logger?: ClientLogger };
