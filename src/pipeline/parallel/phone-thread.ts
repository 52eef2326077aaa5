/**
 * The phone worker's thread (phone-worker.ts): loads libphonenumber-js and the phone transform's
 * parse, nothing else of the pipeline, and answers each batch's parses in the order asked.
 */
import { parentPort } from 'node:worker_threads';
import { parsePhone } from '../mapping/transforms/phone.js';
import type { PhoneAnswer, PhoneJob, PhoneReply } from './phone-worker.js';

const port = parentPort!;
port.on('message', (job: PhoneJob) => {
  const answers: PhoneAnswer[] = job.texts.map((s, i) => {
    const out = parsePhone(s, job.regions[i] ?? undefined, job.checks[i]!);
    return typeof out === 'string' ? out : [out.code, out.message];
  });
  port.postMessage({ id: job.id, answers } satisfies PhoneReply);
});
