/**
 * Options of the embedded lending service, declared once with defaults and descriptions; the
 * `serve` command and `startService` both take them from here.
 */
import { z } from 'zod';
import { closestName } from '../contract/closest-name.js';
import { StagecoachError } from '../contract/errors.js';
import { parseDialect } from './dialect/switches.js';

export const serviceConfigSchema = z.object({
  port: z.number().int().min(0).max(65535).default(0).describe('TCP port on 127.0.0.1; 0 picks a free one'),
  host: z.string().default('127.0.0.1').describe('Address to listen on (loopback by default)'),
  dataDir: z.string().default('./.stagecoach/service').describe('Folder holding the SQLite database and keys'),
  tokenTtlSeconds: z.number().int().positive().default(300).describe('Lifetime of issued access tokens, in seconds'),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('pino log level'),
  maxStagingBytes: z
    .number()
    .int()
    .positive()
    .default(512 * 1024 * 1024)
    .describe('Byte limit of one staging upload request'),
  maxRecordBytes: z
    .number()
    .int()
    .positive()
    .default(1024 * 1024)
    .describe('Byte limit of one staged record'),
  idleTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(60_000)
    .describe('A connection that sends and receives nothing for this long is closed, in ms (an upload whose body stops is cut)'),
  requestTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(30 * 60_000)
    .describe('Longest time to receive one whole request, headers and body, in ms (a 512 MiB upload at 300 KB/s fits)'),
  headersTimeoutMs: z.number().int().positive().default(60_000).describe('Longest time to receive the headers of a request, in ms'),
  jobRecordsPerSecond: z
    .number()
    .positive()
    .optional()
    .describe('Slow background jobs down to this many records/s (tests of crash and polling)'),
  allowPrivateWebhooks: z.boolean().default(false).describe('Allow webhook uris on private (RFC 1918) networks'),
  allowLoopbackWebhooks: z.boolean().default(true).describe('Allow webhook uris on loopback (this is a local service)'),
  faults: z.string().optional().describe('Fault-injection spec, see docs/fault-injection.md'),
  faultSeed: z.number().int().default(1).describe('Seed of the fault-injection random generator'),
  dialect: z
    .string()
    .optional()
    .describe(
      'Answer with the alternatives to the service’s own choices, e.g. "nulls,counters-from-0,gzip" or "all" (docs/contract-gaps.md)',
    ),
  alterations: z
    .string()
    .optional()
    .describe('Data alterations at import (truncate a field, drop a list item, …), see docs/fault-injection.md'),
  webhookTimeoutMs: z.number().int().positive().default(5000).describe('Timeout of one webhook delivery attempt, in ms'),
  webhookMaxAttempts: z.number().int().positive().default(10).describe('Attempts per webhook delivery before it is marked failed'),
  webhookRetryBaseMs: z
    .number()
    .int()
    .positive()
    .default(500)
    .describe('First webhook retry delay bound in ms (doubles per attempt, full jitter)'),
  webhookRetryCapMs: z.number().int().positive().default(300_000).describe('Largest webhook retry delay in ms (also caps Retry-After)'),
  webhookConcurrency: z.number().int().positive().default(8).describe('Webhook deliveries in flight at once'),
  webhookPollMs: z.number().int().positive().default(250).describe('How often the webhook dispatcher looks for new events when not woken'),
});
export type ServiceConfig = z.infer<typeof serviceConfigSchema>;
export type ServiceOptions = z.input<typeof serviceConfigSchema>;

/**
 * The service's options with their defaults. An option it does not know is refused (CONFIG_INVALID)
 * with the closest known one, instead of being dropped: `idleTimeout: 5` for `idleTimeoutMs`
 * would otherwise leave the default in force without a word.
 * @example parseServiceConfig({ port: 0, dataDir: '/tmp/svc' }).tokenTtlSeconds // 300
 */
export function parseServiceConfig(options: ServiceOptions): ServiceConfig {
  const known = Object.keys(serviceConfigSchema.shape);
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const near = closestName(key, known);
    throw new StagecoachError(
      'CONFIG_INVALID',
      `unknown service option ${JSON.stringify(key.slice(0, 100))}${near ? ` (did you mean ${near}?)` : ''}; the options are ${known.join(', ')}`,
      { field: key },
    );
  }
  const config = serviceConfigSchema.parse(options);
  parseDialect(config.dialect); // a misspelt switch is refused at start, not ignored
  return config;
}
