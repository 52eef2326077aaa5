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
import { parseServiceConfig, type ServiceConfig, type ServiceOptions } from './config.js';
import { BackgroundWork, type ServiceContext } from './context.js';
import { openDatabase } from './store/database.js';
import { lockDataDir } from './store/data-dir-lock.js';
import { mkdirSync } from 'node:fs';
import { createIdentityTables, seedDemoIdentities } from './auth/identities.js';
import { loadSigningKeys } from './auth/keys.js';
import { createOutboxTables } from './events/outbox.js';
import { buildApp } from './app.js';

export { DEMO_IDENTITIES } from './auth/identities.js';
export { parseServiceConfig, serviceConfigSchema, type ServiceConfig, type ServiceOptions } from './config.js';

export interface RunningService {
  url: string;
  port: number;
  dataDir: string;
  /** Stops accepting requests, lets in-flight ones finish, stops background work, closes the database. */
  close(): Promise<void>;
}

export async function startService(options: ServiceOptions & { logger?: Logger } = {}): Promise<RunningService> {
  const { logger: _logger, ...settings } = options;
  const config: ServiceConfig = parseServiceConfig(settings);
  config.dataDir = resolve(config.dataDir);
  const logger = options.logger ?? pino({ level: config.logLevel, base: { service: 'embedded-lending-service' } });
  mkdirSync(config.dataDir, { recursive: true });
  const unlock = lockDataDir(config.dataDir);
  let db: ReturnType<typeof openDatabase> | undefined;
  let ctx: ServiceContext | undefined;
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
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
    // Background work (the webhook dispatcher) started with the app: stop it before the database
    // closes, or it fails on a closed connection and that, not the cause, is what gets logged.
    await app?.close().catch(() => undefined);
    await ctx?.background.stop().catch(() => undefined);
    db?.close();
    unlock();
    throw err;
  }
  const running = { app, ctx, db };
  const address = running.app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  running.ctx.baseUrl = `http://${config.host}:${port}`;
  logger.info({ url: running.ctx.baseUrl, dataDir: config.dataDir }, 'embedded lending service listening');

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await running.app.close();
      await running.ctx.background.stop();
      running.db.pragma('wal_checkpoint(TRUNCATE)');
      running.db.close();
      unlock();
      logger.info('embedded lending service stopped');
    })());
  return { url: running.ctx.baseUrl, port, dataDir: config.dataDir, close };
}
