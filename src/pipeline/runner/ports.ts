/**
 * What a run needs from the outside: the part of the platform client it uses, and a logger.
 */
import type { Component, StagingResult } from '../../contract/migration.js';

/** The part of the client a run uses (the shared client satisfies it). */
export interface PipelineClient {
  migrations: {
    current(opts?: { signal?: AbortSignal }): Promise<{ referenceId: string; components?: Array<{ component: string }> } | undefined>;
    create(components: readonly Component[], opts?: { signal?: AbortSignal }): Promise<{ referenceId: string }>;
    stageCounterparties(
      migrationId: string,
      body: Uint8Array | string,
      opts: { format?: 'json-seq' | 'jsonl'; signal?: AbortSignal },
    ): Promise<StagingResult[]>;
  };
  close?(): Promise<void>;
}

/** Minimal structured logger (pino fits). */
export interface RunLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
}
