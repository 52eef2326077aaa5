/**
 * The ledger worker thread (see writer.ts): its own connection to the run's ledger file, one
 * transaction per message, answered in order. `close` closes the connection and ends the thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openLedger } from './ledger.js';
import { PackedRecords } from './packed-records.js';
import type { WriterReply, WriterRequest } from './writer.js';

const { file } = workerData as { file: string };
const ledger = openLedger(file);
const port = parentPort!;

port.on('message', (req: WriterRequest | { id: 0; op: 'close' }) => {
  if (req.op === 'close') {
    ledger.close();
    port.close();
    return;
  }
  let reply: WriterReply;
  try {
    const method = ledger[req.op] as (...args: unknown[]) => unknown;
    const args = req.args.map((a) => (PackedRecords.isWire(a) ? PackedRecords.fromWire(a) : a));
    reply = { id: req.id, result: method.apply(ledger, args) };
  } catch (err) {
    const e = err as { message?: string; code?: string };
    reply = { id: req.id, error: { message: e.message ?? String(err), ...(typeof e.code === 'string' ? { code: e.code } : {}) } };
  }
  port.postMessage(reply);
});
