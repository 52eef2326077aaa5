/**
 * The source pass: every row of every source mapped and checked, in source order (sources in
 * pipeline order, files in sorted order, rows in file order), after the key pass when a mapping
 * can make relations. Big files of a format that splits are read in ranges by a parallel
 * reader's workers; the phone numbers of the rows this thread maps are parsed a batch ahead on
 * the phone worker. Both live exactly as long as the pass (try/finally).
 */
import { KeyIndex, rejectUnreadable, rowChecker, type KeyChecks } from '../checks/index.js';
import type { PipelineDefinition } from '../definition/load-pipeline.js';
import type { PhoneQuestions } from '../mapping/transforms/phone.js';
import { type PhoneAnswerMap, PhoneWorker } from '../parallel/phone-worker.js';
import { ParallelReader } from '../parallel/read-parallel.js';
import { preparePipeline, type PreparedSource } from '../prepare-pipeline.js';
import { formatTallies, isSourceRowError, newTally, readSourceBatches, type SourceStart } from '../source/index.js';
import type { FrontRow, SourceRow, SourceRowError } from '../types.js';
import { keyPass } from './key-pass.js';
import { ChildJoin } from '../children/child-join.js';
import type { ReadBatchesOptions, ReadResume } from './options.js';

/** Yields every source row, mapped and checked, in batches (a file chunk or a range). */
export async function* sourcePass(def: PipelineDefinition, options: ReadBatchesOptions): AsyncGenerator<Iterable<FrontRow>> {
  const { signal } = options;
  const prepared = await preparePipeline(def);
  const { sources, files } = prepared;
  const index = new KeyIndex();
  const hashRows = options.hashRows !== false;
  const resume = options.resume;
  // Files in reading order; a resumed run skips those before its start.
  const order = sources.flatMap((s) => s.files.map((f) => `${s.def.name}\u0000${f.file}`));
  const resumeAt = resume ? order.indexOf(`${resume.source}\u0000${resume.file}`) : -1;
  const parallel = options.parallel ? new ParallelReader(def.path, { ...options.parallel, hashRows }) : undefined;
  const phoneOption = options.phoneWorker ?? true;
  // Started by the first batch with a number to parse.
  const phoneWorker =
    phoneOption === false || (phoneOption === true && !PhoneWorker.available())
      ? undefined
      : new PhoneWorker(phoneOption === true ? undefined : phoneOption.threadUrl);
  try {
    // Meanwhile the workers of a parallel reader read the first ranges of the first file they take.
    if (prepared.needsKeyPass) {
      // A resumed run reads the files before its start not at all, and its start on this thread.
      if (parallel) await prefetchFirstFile(parallel, sources, resumeAt, signal);
      await keyPass(sources, index, signal);
    }

    const keyChecks: KeyChecks = { index, duplicates: undefined, rejectMissing: def.checks.missingRelationTarget === 'reject', files };
    const checkRow = rowChecker(options.keepRecords !== false);
    if (resume && resumeAt >= 0) indexSkipped(sources, resume, index);

    let at = -1;
    for (const [sourceIndex, s] of sources.entries()) {
      // A source with child sources: their rows indexed on disk first, joined to its rows as they are read.
      const join =
        at + s.files.length >= resumeAt && s.children.length > 0
          ? new ChildJoin(s.def.name, s.children, (values) => s.mapping.key(values), options.childTallies)
          : undefined;
      try {
        if (join) {
          yield* join.fill({ signal, hashRows, tallies: options.tallies });
          if (resume && resume.source === s.def.name) dropSettled(join, s, resume);
        }
        for (const f of s.files) {
          if (++at < resumeAt) continue;
          // Each row is mapped as it is taken, not the chunk's rows all at once: a few hundred mapped
          // rows alive together were what every scavenge copied (about 1 MB each time).
          const phones = s.mapping.phones;
          function* mapEach(batch: readonly (SourceRow | SourceRowError)[], answers?: PhoneAnswerMap): Generator<FrontRow> {
            phones?.answers.use(answers);
            for (const row of batch) {
              if (isSourceRowError(row)) yield rejectUnreadable(row);
              else if (join === undefined) yield checkRow(s.mapping, row, f.index, keyChecks);
              else {
                const attached = join.attach(row.values);
                yield* join.settle(checkRow(s.mapping, row, f.index, keyChecks), attached, row.values);
              }
            }
            phones?.answers.use(undefined);
          }
          // A file read from a resume point is not read whole: its count would be partial. A file
          // the parallel reader takes is read in ranges, each counted where it is read and added up.
          // Children join on this thread: a parent source's files are not read by workers.
          const byWorkers = at !== resumeAt && join === undefined && parallel !== undefined && (await parallel.takes(s, f.path));
          const whole = at !== resumeAt;
          const tally = whole && options.tallies && formatTallies(s.def.format) ? newTally(s.def.name, f.file, s.def.format) : undefined;
          if (tally) options.tallies!.push(tally);
          async function* onThisThread(from: SourceStart | undefined): AsyncGenerator<Iterable<FrontRow>> {
            const batches = readSourceBatches(s.def, f, { requiredColumns: s.mapping.columns, signal, from, hashRows, tally });
            if (phones === undefined || phoneWorker === undefined) {
              for await (const batch of batches) yield mapEach(batch);
              return;
            }
            const ask = (batch: readonly (SourceRow | SourceRowError)[], questions: PhoneQuestions) => {
              for (const row of batch) if (!isSourceRowError(row)) phones.ask(row.values, questions);
            };
            for await (const [batch, answers] of phoneWorker.ahead(batches, ask)) yield mapEach(batch, answers);
          }
          const rows =
            at === resumeAt
              ? onThisThread(resume!.range)
              : byWorkers
                ? parallel!.readFile(sourceIndex, s, f, keyChecks, onThisThread, signal, tally)
                : onThisThread(undefined);
          yield* rows;
        }
        if (join) yield* join.orphans();
      } finally {
        join?.close();
      }
    }
  } finally {
    index.close();
    await parallel?.close();
    await phoneWorker?.close();
  }
}

/**
 * A resumed run: the children of the rows settled before its start taken out of the join (they
 * went with their parents then), so they are neither joined again nor reported as orphans.
 */
function dropSettled(join: ChildJoin, s: PreparedSource, resume: ReadResume): void {
  for (const f of s.files) {
    const atStart = f.file === resume.file;
    for (const [key] of resume.keysBefore(s.def.name, f.file, atStart ? resume.range.byteOffset : Number.MAX_SAFE_INTEGER))
      join.settledBefore(key);
    if (atStart) return;
  }
}

/**
 * A resumed run's key index for the rows it does not read: every keyed row the ledger holds before
 * the start, at its file and line, as the source pass would have added it.
 */
function indexSkipped(sources: readonly PreparedSource[], resume: ReadResume, index: KeyIndex): void {
  for (const s of sources) {
    for (const f of s.files) {
      const atStart = s.def.name === resume.source && f.file === resume.file;
      for (const [key, line] of resume.keysBefore(s.def.name, f.file, atStart ? resume.range.byteOffset : Number.MAX_SAFE_INTEGER))
        index.add(s.mapping.scope, key, f.index, line);
      if (atStart) return;
    }
  }
}

/** Starts the first file the parallel reader takes on its workers (the key pass keeps this thread). */
async function prefetchFirstFile(
  parallel: ParallelReader,
  sources: readonly PreparedSource[],
  resumeAt: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  let at = -1;
  for (const [sourceIndex, s] of sources.entries()) {
    for (const f of s.files) {
      // A source with children is read on this thread (the join is here): never prefetched.
      if (++at > resumeAt && s.children.length === 0 && (await parallel.takes(s, f.path)))
        return parallel.prefetch(sourceIndex, s, f, signal);
    }
  }
}
