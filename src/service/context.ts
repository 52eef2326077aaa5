/**
 * What every part of the service is handed: the database, configuration, logger, signing keys,
 * the event outbox and a registry of background work that shutdown waits for.
 */
import type { Logger } from 'pino';
import type { ServiceConfig } from './config.js';
import type { Db } from './store/database.js';
import type { SigningKeys } from './auth/keys.js';

export interface ServiceContext {
  db: Db;
  config: ServiceConfig;
  logger: Logger;
  keys: SigningKeys;
  background: BackgroundWork;
  /** The base URL once listening (empty before). */
  baseUrl: string;
}

/**
 * Background work (jobs, webhook deliveries, message handling) registered here is aborted on
 * shutdown and awaited, so the database is closed only when nothing writes to it any more.
 */
export class BackgroundWork {
  private readonly controller = new AbortController();
  private readonly running = new Set<Promise<unknown>>();
  private readonly stoppers: Array<() => void | Promise<void>> = [];

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Runs `task` in the background; errors are logged by the caller's task itself. */
  run(task: (signal: AbortSignal) => Promise<unknown>): void {
    if (this.controller.signal.aborted) return;
    const p = task(this.controller.signal).catch(() => undefined);
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  /** Registers something to stop on shutdown (a timer, a dispatcher loop). */
  onStop(stop: () => void | Promise<void>): void {
    this.stoppers.push(stop);
  }

  async stop(): Promise<void> {
    this.controller.abort();
    for (const stop of this.stoppers) await stop();
    await Promise.allSettled([...this.running]);
  }
}
