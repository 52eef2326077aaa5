/**
 * The phone worker: one thread that parses a batch's phone numbers (libphonenumber-js, 9-30 µs
 * a number, numbers almost all distinct) while the main thread maps the batch before it. Where
 * the main thread maps (`run` on two cores, `plan`, any file no reader worker takes), the phone
 * step was a fifth of its time; a reader worker would take it off too, but with the whole
 * pipeline loaded in it (docs/performance.md). The thread loads only the phone transform's
 * parse (phone-thread.ts); its answers are the parse's own, so the values are the same as
 * without it (mapping/transforms/phone.ts, PhoneAnswers). A failed worker fails the read: no
 * batch is mapped without the answers it was promised.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { StagecoachError } from '../../contract/errors.js';
import { PhoneQuestions, type PhoneCheck } from '../mapping/transforms/phone.js';
import { TransformFailure } from '../mapping/transforms/failure.js';

/** A batch's parses, as parallel columns (PhoneQuestions). */
export interface PhoneJob {
  id: number;
  texts: string[];
  /** `null` for a number without a region (structured clone keeps undefined too, but null says it). */
  regions: (string | null)[];
  checks: PhoneCheck[];
}
/** The E.164 number, or the refusal's code and message. */
export type PhoneAnswer = string | [code: TransformFailure['code'], message: string];
export interface PhoneReply {
  id: number;
  answers: PhoneAnswer[];
}

/** A batch's answers, by PhoneQuestions key. */
export type PhoneAnswerMap = ReadonlyMap<string, string | TransformFailure>;

const THREAD_URL = new URL('./phone-thread.js', import.meta.url);
const NONE: PhoneAnswerMap = new Map();

export class PhoneWorker {
  /**
   * Whether the compiled thread script is there to start. Code run from its TypeScript sources
   * (tests that import src/) has none: numbers are then parsed on this thread by the same
   * function, as the parallel reader then reads on this thread.
   */
  static available(): boolean {
    return existsSync(fileURLToPath(THREAD_URL));
  }

  private worker: Worker | undefined;
  private failure: Error | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { keys: string[]; resolve: (a: PhoneAnswerMap) => void; reject: (e: Error) => void }>();

  /** `threadUrl`: the thread's script (default the compiled phone-thread.js); tests give one that dies. */
  constructor(private readonly threadUrl: URL = THREAD_URL) {}

  /**
   * The batches as they come, each with its answers, asked one batch ahead: batch n+1 is read
   * and handed to the worker before batch n is yielded, so two batches are in flight at most.
   * `ask` adds the parses a batch's rows will need.
   */
  async *ahead<B>(batches: AsyncIterable<B>, ask: (batch: B, questions: PhoneQuestions) => void): AsyncGenerator<[B, PhoneAnswerMap]> {
    let held: [B, Promise<PhoneAnswerMap>] | undefined;
    for await (const batch of batches) {
      const questions = new PhoneQuestions();
      ask(batch, questions);
      const next: [B, Promise<PhoneAnswerMap>] = [batch, this.answer(questions)];
      if (held) yield [held[0], await held[1]];
      held = next;
    }
    if (held) yield [held[0], await held[1]];
  }

  /** Parses the questions on the worker. */
  answer(questions: PhoneQuestions): Promise<PhoneAnswerMap> {
    if (questions.keys.length === 0) return Promise.resolve(NONE);
    const answers = new Promise<PhoneAnswerMap>((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      const worker = this.start();
      const id = ++this.nextId;
      this.pending.set(id, { keys: questions.keys, resolve, reject });
      const job: PhoneJob = { id, texts: questions.texts, regions: questions.regions.map((r) => r ?? null), checks: questions.checks };
      worker.postMessage(job);
    });
    // Awaited in turn by `ahead`; one left behind when the read stops early must not be an unhandled rejection.
    answers.catch(() => undefined);
    return answers;
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.threadUrl);
    worker.on('message', (reply: PhoneReply) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      const map = new Map<string, string | TransformFailure>();
      for (let i = 0; i < p.keys.length; i++) {
        const a = reply.answers[i];
        if (a === undefined) return p.reject(this.fail(`the phone worker answered ${reply.answers.length} of ${p.keys.length} numbers`));
        map.set(p.keys[i]!, typeof a === 'string' ? a : new TransformFailure(a[0], a[1]));
      }
      p.resolve(map);
    });
    worker.on('error', (err) => this.fail(`the phone worker failed: ${err.message}`, err));
    worker.on('exit', (code) => {
      if (code !== 0) this.fail(`the phone worker exited with ${code}`);
    });
    this.worker = worker;
    return worker;
  }

  private fail(message: string, cause?: Error): Error {
    this.failure ??= new StagecoachError('INTERNAL_ERROR', message, {}, cause ? { cause } : undefined);
    for (const p of this.pending.values()) p.reject(this.failure);
    this.pending.clear();
    return this.failure;
  }

  /** Stops the worker (answers not yet given are dropped). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.failure ??= new StagecoachError('ABORTED', 'the phone worker is closed');
    for (const p of this.pending.values()) p.reject(this.failure);
    this.pending.clear();
    await worker?.terminate();
  }
}
