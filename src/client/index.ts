/**
 * The stagecoach client: one typed entry for the whole lending-service interface.
 *
 * @example
 *   const client = createClient({ baseUrl: 'http://127.0.0.1:8787', clientId: 'demo-client',
 *     clientSecret: 'demo-secret', brokerKey: 'demo-broker', labelReferenceId: 'demo-label' });
 *   const migration = await client.migrations.create(['Counterparties']);
 *   const results = await client.migrations.stageCounterparties(migration.referenceId, body, { format: 'json-seq' });
 *   const validation = await client.jobs.waitFor(await client.jobs.validateStaging(migration.referenceId));
 *   await client.close();
 */
import { StagecoachError } from '../contract/errors.js';
import { authApi } from './api-auth.js';
import { counterpartiesApi } from './api-counterparties.js';
import { eventsApi } from './api-events.js';
import { jobsApi, migrationsApi } from './api-migrations.js';
import { lodgingApi, processesApi } from './api-processes.js';
import { clientOptionsSchema, type ClientOptions, type ResolvedClientOptions } from './options.js';
import { TokenManager } from './tokens.js';
import { Transport } from './transport.js';

export interface StagecoachClient {
  auth: ReturnType<typeof authApi>;
  processes: ReturnType<typeof processesApi>;
  lodging: ReturnType<typeof lodgingApi>;
  counterparties: ReturnType<typeof counterpartiesApi>;
  events: ReturnType<typeof eventsApi>;
  migrations: ReturnType<typeof migrationsApi>;
  jobs: ReturnType<typeof jobsApi>;
  /** The options in effect (defaults filled in; the secret included: do not log this). */
  readonly options: ResolvedClientOptions;
  /** How many tokens this client has fetched so far. */
  readonly tokenFetches: number;
  /** Closes the connection pool; in-flight requests finish first. */
  close(): Promise<void>;
}

export function createClient(options: ClientOptions): StagecoachClient {
  const parsed = clientOptionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.map(String).join('.');
    throw new StagecoachError('CONFIG_INVALID', `client option ${field}: ${issue.message}`, { field });
  }
  const resolved: ResolvedClientOptions = { ...parsed.data, logger: options.logger };
  const transport = new Transport(resolved);
  const tokens = new TokenManager(transport);
  transport.useTokens(tokens);
  return {
    auth: authApi(transport, tokens),
    processes: processesApi(transport),
    lodging: lodgingApi(transport),
    counterparties: counterpartiesApi(transport),
    events: eventsApi(transport),
    migrations: migrationsApi(transport),
    jobs: jobsApi(transport),
    options: resolved,
    get tokenFetches() {
      return tokens.fetches;
    },
    close: () => transport.close(),
  };
}

export { ClientError } from './errors.js';
export type { ClientOptions, ResolvedClientOptions, ClientLogger } from './options.js';
export type { TokenInfo, Jwks } from './api-auth.js';
export type { Counterparty, CounterpartyListPage, UncheckedCounterparty } from './api-counterparties.js';
export type { Registration, Delivery } from './api-events.js';
export type { MigrationRecord, StagedPage, StageOptions, JobState, WaitOptions } from './api-migrations.js';
export type { ProcessRecord } from './api-processes.js';
export type { StreamOptions, StreamResumeInfo } from './streams.js';
export type { RetryPolicy } from './retry.js';
