/**
 * The embedded lending service: the platform of the specification, on loopback, backed by
 * SQLite. `startService` is what `stagecoach serve`, `stagecoach demo` and the tests use.
 *
 * @example
 *   const service = await startService({ port: 0, dataDir: '/tmp/svc' });
 *   console.log(service.url); // http://127.0.0.1:41234
 *   await service.close();
 */
import pino, { type Logger } from 'pino';
import { resolve } from 'node:path';
import { serviceConfigSchema, type ServiceConfig, type ServiceOptions } from './config.js';
import { BackgroundWork, type ServiceContext } from './context.js';
import { openDatabase } from './store/database.js';
import { lockDataDir } from './store/data-dir-lock.js';
import { mkdirSync } from 'node:fs';
import { createIdentityTables, seedDemoIdentities } from './auth/identities.js';
import { loadSigningKeys } from './auth/keys.js';
import { createOutboxTables } from './events/outbox.js';
import { buildApp } from './app.js';

export { DEMO_IDENTITIES } from './auth/identities.js';
export { serviceConfigSchema, type ServiceConfig, type ServiceOptions } from './config.js';

export interface RunningService {
  url: string;
  port: number;
  dataDir: string;
  /** Stops accepting requests, lets in-flight ones finish, stops background work, closes the database. */
  close(): Promise<void>;
}

export async function startService(options: ServiceOptions & { logger?: Logger } = {}): Promise<RunningService> {
  const config: ServiceConfig = serviceConfigSchema.parse(options);
  config.dataDir = resolve(config.dataDir);
  const logger = options.logger ?? pino({ level: config.logLevel, base: { service: 'embedded-lending-service' } });
  mkdirSync(config.dataDir, { recursive: true });
  const unlock = lockDataDir(config.dataDir);
  let db: ReturnType<typeof openDatabase> | undefined;
  let ctx: ServiceContext;
  let app: Awaited<ReturnType<typeof buildApp>>;
  try {
    db = openDatabase(config.dataDir);
    createIdentityTables(db);
    seedDemoIdentities(db);
    createOutboxTables(db);
    const keys = await loadSigningKeys(db);
    ctx = { db, config, logger, keys, background: new BackgroundWork(), baseUrl: '' };
    app = await buildApp(ctx);
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    db?.close();
    unlock();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  ctx.baseUrl = `http://${config.host}:${port}`;
  logger.info({ url: ctx.baseUrl, dataDir: config.dataDir }, 'embedded lending service listening');

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await app.close();
      await ctx.background.stop();
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
      unlock();
      logger.info('embedded lending service stopped');
    })());
  return { url: ctx.baseUrl, port, dataDir: config.dataDir, close };
}
