/**
 * The one shape of the CSV core's two engines: the plain-line engine (plain-engine.ts) and
 * csv-parse (parse-engine.ts). The core (core.ts) gives the current engine the input's bytes in
 * order; an engine hands each record it completes to the shared row building (records.ts) and,
 * where the other engine must read on, stops and hands back the rest of the bytes.
 */

/** Where an engine stopped and the other one starts: a file offset that begins a record, and its line. */
export interface HandOver {
  at: number;
  line: number;
}

export interface CsvEngine {
  /**
   * Reads the next bytes of the input (none, with `last`: the input ended). Returns the bytes
   * from where the other engine must read on (they start at `handOver()`), or undefined when
   * this engine took them all (it may hold an incomplete record until the next bytes come).
   */
  read(data: Buffer | undefined, last: boolean): Buffer | undefined;
  /** Where the bytes the last `read` returned start. */
  handOver(): HandOver;
  /** The input ended after the last `read`: the engine completes what it holds. */
  end(): void;
  /** Lets go of what the engine holds (the input ended, or the other engine reads on). */
  close(): void;
}
