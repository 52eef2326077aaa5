/**
 * The resume stage: decides where a run starts reading. When the previous run of the pipeline
 * ended without finishing (killed, Ctrl-C, the service gone), with the same pipeline and mapping
 * files, the same migration, and source files that are the same (size, mtime, a hash of the first
 * 64 KiB, and the row at the checkpoint hashing as the ledger has it), the run starts at the last
 * row of that run's unbroken series of settled batches instead of at byte 0. Anything else, and
 * the run reads everything and diffs against the ledger as always. Either way the report says
 * which, and why.
 *
 * The checkpoint is read back from the ledger, not written by the run: batches go out in source
 * order, and a run's rejects are written before the next batch, so when a batch is `done` every
 * row before its last one is settled, rejected or was skipped as unchanged. The row at the
 * checkpoint itself is read again (and skipped as unchanged): reading starts at a row's first
 * byte, the one offset the ledger knows.
 *
 * Resuming needs a source whose format can start reading at a record's byte offset (its `splitter`).
 */
import { hash } from 'node:crypto';
import { open, stat } from 'node:fs/promises';
import type { Ledger, RecordProvenance, RunRow } from '../../ledger/index.js';
import type { PipelineDefinition, SourceDefinition } from '../definition/load-pipeline.js';
import { formatOf, listSourceFiles, readSourceBatches, type SourceFile, type SourceStart } from '../source/index.js';

/** Bytes of a file's head that its fingerprint hashes. */
const HEAD_BYTES = 64 * 1024;

/** A source file as a run found it. */
export interface SourceFingerprint {
  source: string;
  file: string;
  size: number;
  mtimeMs: number;
  /** sha256 of the first 64 KiB. */
  head: string;
}

/** Where a run starts reading: a row's first byte in one file of one source. */
export type ResumePoint = RecordProvenance;

/** What the ledger keeps of a run's sources (run_sources). */
interface RunSources {
  files: SourceFingerprint[];
  start?: ResumePoint;
  /** The run read only a corrections file: its batches say nothing of where the sources were. */
  corrections?: boolean;
}

/** What the run report says about where reading started. */
export interface ResumeReport {
  /** `resumed`: reading started after the rows the previous run settled; `full`: from the start of every file. */
  mode: 'resumed' | 'full';
  /** Why (one line, for the terminal). */
  reason: string;
  /** The unfinished run resumed from. */
  fromRun?: number;
  file?: string;
  /** Line of the first row read in `file` (the last row the previous run settled, read again). */
  line?: number;
  byteOffset?: number;
}

/** What the reader needs to start at the checkpoint (read-pipeline.ts `resume`). */
export interface ResumeStart {
  source: string;
  file: string;
  range: SourceStart;
  /** The checkpoint row as the ledger has it. */
  point: ResumePoint;
  /** The keys, with their lines, of a file's rows before `beforeByte` as the ledger has them (they stand in for the rows not read). */
  keysBefore: (source: string, file: string, beforeByte: number) => Iterable<[legacyKey: string, line: number]>;
}

interface Listed {
  source: SourceDefinition;
  file: SourceFile;
}

/**
 * The resume decision of one run, in two steps: `look` before the run is recorded, `decide` once
 * the migration is known (a run that does not resume then clears the keyless rejects it reports
 * afresh as it reads).
 */
export class Resume {
  private constructor(
    private readonly def: PipelineDefinition,
    private readonly listed: Listed[],
    readonly fingerprints: SourceFingerprint[],
    /** The previous run, when it ended without finishing with this same pipeline. */
    private readonly previous: RunRow | undefined,
    private readonly fullReason: string | undefined,
    private readonly corrections: boolean,
  ) {}

  /**
   * Looks at the previous run and fingerprints the source files.
   * @example const resume = await Resume.look(def, ledger, pipelineHash, { corrections: undefined });
   */
  static async look(def: PipelineDefinition, ledger: Ledger, pipelineHash: string, opts: { corrections: boolean }): Promise<Resume> {
    const listed: Listed[] = [];
    let fingerprints: SourceFingerprint[];
    try {
      for (const source of def.sources) for (const file of await listSourceFiles(def.dir, source)) listed.push({ source, file });
      fingerprints = await Promise.all(listed.map(fingerprint));
    } catch (err) {
      // A source that cannot be listed or opened: reading reports it, at its place in the run.
      return new Resume(def, [], [], undefined, `the sources cannot be read: ${(err as Error).message}`, opts.corrections);
    }
    const previous = ledger
      .runs(def.name)
      .filter((r) => r.component === def.component)
      .at(-1);
    const why = (reason: string) => new Resume(def, listed, fingerprints, undefined, reason, opts.corrections);
    if (opts.corrections) return why('a corrections run reads only its corrections');
    if (!previous) return why('first run of this pipeline');
    if (previous.status === 'completed') return why(`the previous run (${previous.id}) finished`);
    if (previous.pipelineHash !== pipelineHash) return why(`the pipeline or its mappings changed since run ${previous.id}`);
    return new Resume(def, listed, fingerprints, previous, undefined, false);
  }

  /**
   * Whether every source file is as run `runId` found it (the same files, each of the same size,
   * modification time and first 64 KiB): false too when the run kept no fingerprints.
   * Undefined for a corrections run: it read no export, so it says nothing of one.
   * @example await Resume.sourcesAsFound(def, ledger, 3) // false once a row was added to an export
   */
  static async sourcesAsFound(def: PipelineDefinition, ledger: Ledger, runId: number): Promise<boolean | undefined> {
    const stored = ledger.runSources(runId) as RunSources | undefined;
    if (!stored) return false;
    if (stored.corrections) return undefined;
    const now: SourceFingerprint[] = [];
    try {
      for (const source of def.sources)
        for (const file of await listSourceFiles(def.dir, source)) now.push(await fingerprint({ source, file }));
    } catch {
      return false;
    }
    const same = (a: SourceFingerprint, b: SourceFingerprint) =>
      a.source === b.source && a.file === b.file && a.size === b.size && a.mtimeMs === b.mtimeMs && a.head === b.head;
    return now.length === stored.files.length && now.every((f) => stored.files.some((g) => same(f, g)));
  }

  /**
   * Where this run starts, and what its report says about it.
   * @example const { report, start } = await resume.decide(ledger, migrationId);
   */
  async decide(ledger: Ledger, migrationId: string): Promise<{ report: ResumeReport; start?: ResumeStart }> {
    const full = (reason: string): { report: ResumeReport } => ({ report: { mode: 'full', reason } });
    const prev = this.previous;
    if (!prev) return full(this.fullReason ?? 'no unfinished run to resume');
    if (prev.migrationId !== migrationId) return full(`run ${prev.id} staged into another migration (${prev.migrationId ?? 'none'})`);
    const stored = ledger.runSources(prev.id) as RunSources | undefined;
    if (!stored) return full(`run ${prev.id} kept no fingerprints of its source files`);
    if (stored.corrections) return full(`run ${prev.id} read only a corrections file`);
    const point = this.lastOf(ledger.lastDoneBatchRows(prev.id)) ?? stored.start;
    if (!point) return full(`run ${prev.id} settled no batch`);
    const at = this.position(point);
    if (at < 0) return full(`${point.file} is no longer a file of source ${point.source}`);
    const { source, file } = this.listed[at]!;
    if (!formatOf(source.format).splitter)
      return full(`source ${source.name} is ${source.format}: resuming reads from a byte offset, which this format cannot start at`);
    // Every file up to the checkpoint's must be as the previous run found it.
    for (let i = 0; i <= at; i++) {
      const now = this.fingerprints[i]!;
      const then = stored.files.find((f) => f.source === now.source && f.file === now.file);
      if (!then || then.size !== now.size || then.mtimeMs !== now.mtimeMs || then.head !== now.head)
        return full(`${now.file} changed since run ${prev.id} (size, modification time or first ${HEAD_BYTES / 1024} KiB)`);
    }
    const range = await checkpointRange(source, file, point);
    if (!range) return full(`${point.file}:${point.line} is not the row run ${prev.id} settled there`);
    return {
      report: {
        mode: 'resumed',
        reason: `run ${prev.id} ended without finishing; the rows before ${point.file}:${point.line} are settled`,
        fromRun: prev.id,
        file: point.file,
        line: point.line,
        byteOffset: point.byteOffset,
      },
      start: {
        source: point.source,
        file: point.file,
        range,
        point,
        keysBefore: (source, file, beforeByte) =>
          ledger.keysBefore(ledger.scope(this.def.name, this.def.component), source, file, beforeByte),
      },
    };
  }

  /**
   * The source files that are not as this run found them when it started (size, modification
   * time, first 64 KiB), each in words: a file cut or rewritten while the run read it. Its rows
   * were read from a file that no longer exists as such, so they cannot be counted as that
   * file's rows (read-and-send.ts fails the run). A file that can no longer be opened counts too.
   * @example await resume.changedFiles() // [{ file: 'klanten.csv', message: 'klanten.csv changed while the run read it: 5,021,337 bytes when the run started, 2,510,668 bytes now' }]
   */
  async changedFiles(): Promise<{ file: string; message: string }[]> {
    const out: { file: string; message: string }[] = [];
    for (const [i, l] of this.listed.entries()) {
      const then = this.fingerprints[i]!;
      const now = await fingerprint(l).catch((err: NodeJS.ErrnoException) => err.code ?? err.message);
      if (typeof now === 'string') {
        out.push({ file: then.file, message: `${then.file} changed while the run read it: it cannot be opened any more (${now})` });
        continue;
      }
      if (now.size === then.size && now.mtimeMs === then.mtimeMs && now.head === then.head) continue;
      const what =
        now.size !== then.size
          ? `${bytes(then.size)} when the run started, ${bytes(now.size)} now`
          : now.head !== then.head
            ? `its first ${HEAD_BYTES / 1024} KiB differ from when the run started`
            : `modified at ${new Date(now.mtimeMs).toISOString()}, after the run started`;
      out.push({ file: then.file, message: `${then.file} changed while the run read it: ${what}` });
    }
    return out;
  }

  /** What the ledger keeps of this run's sources. */
  record(start: ResumeStart | undefined): RunSources {
    return {
      files: this.fingerprints,
      ...(start ? { start: start.point } : {}),
      ...(this.corrections ? { corrections: true } : {}),
    };
  }

  /** The row of `rows` that comes last in the pipeline's reading order. */
  private lastOf(rows: readonly RecordProvenance[] | undefined): RecordProvenance | undefined {
    let last: RecordProvenance | undefined;
    let lastAt = -1;
    for (const r of rows ?? []) {
      const at = this.position(r);
      if (at > lastAt || (at === lastAt && r.byteOffset > last!.byteOffset)) {
        last = r;
        lastAt = at;
      }
    }
    return last;
  }

  private position(p: { source: string; file: string }): number {
    return this.listed.findIndex((l) => l.source.name === p.source && l.file.file === p.file);
  }
}

const bytes = (n: number) => `${n.toLocaleString('en-US')} byte${n === 1 ? '' : 's'}`;

async function fingerprint({ source, file }: Listed): Promise<SourceFingerprint> {
  const st = await stat(file.path);
  const fh = await open(file.path, 'r');
  try {
    const buf = Buffer.alloc(Math.min(HEAD_BYTES, st.size));
    await fh.read(buf, 0, buf.length, 0);
    return { source: source.name, file: file.file, size: st.size, mtimeMs: st.mtimeMs, head: hash('sha256', buf, 'hex') };
  } finally {
    await fh.close();
  }
}

/**
 * The range that starts at the checkpoint row, once that row is seen to be the one the ledger
 * holds (same line, same offset, same hash); undefined when it is not. Where reading can start
 * there (a header's columns read from the file's head) is the format's splitter's to say.
 */
async function checkpointRange(source: SourceDefinition, file: SourceFile, point: ResumePoint): Promise<SourceStart | undefined> {
  const range = await formatOf(source.format).splitter?.startAt(source, file, { byteOffset: point.byteOffset, line: point.line });
  if (!range) return undefined;
  const rows = readSourceBatches(source, file, { from: range });
  try {
    const first = (await rows.next()).value?.[0];
    const p = first?.provenance;
    return p && p.line === point.line && p.byteOffset === point.byteOffset && p.hash === point.rowHash ? range : undefined;
  } finally {
    await rows.return(undefined);
  }
}
