/**
 * Many requests on one long-lived AbortSignal (a `--drop-invalid` round: validation lookups 8 at
 * a time, then thousands of staging deletes) must not pile abort listeners on it: undici lets go
 * of its listener only when a response body closes, a tick after it was read, so the next
 * requests used to find the last ones' listeners still there (MaxListenersExceededWarning).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventListeners } from 'node:events';
import { randomUUID } from 'node:crypto';
import { startServiceWithClient, stopServiceWithClient, type ServiceWithClient } from '../support/client-fixture.js';

let f: ServiceWithClient;
beforeAll(async () => {
  f = await startServiceWithClient();
});
afterAll(() => stopServiceWithClient(f));

describe('one signal, many requests', () => {
  it('leaves no abort listener behind once a request is answered, whatever the answer', async () => {
    const m = await f.client.migrations.create(['Counterparties']);
    const ac = new AbortController();
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const after: number[] = [];
      for (let batch = 0; batch < 4; batch++) {
        // 8 at a time, as the validation lookups go: 404 (allowed), and errors (404 on delete)
        await Promise.all(
          Array.from({ length: 8 }, () => f.client.migrations.getStaged(m.referenceId, randomUUID(), { signal: ac.signal })),
        );
        after.push(getEventListeners(ac.signal, 'abort').length);
        const refused = await f.client.migrations.deleteStaged(m.referenceId, randomUUID(), { signal: ac.signal }).catch((e) => e.code);
        expect(refused).toBe('NOT_FOUND');
        after.push(getEventListeners(ac.signal, 'abort').length);
      }
      // a stream handed to the caller stays abortable until it is read
      const logs = f.client.migrations.logs(m.referenceId, {}, { signal: ac.signal });
      for await (const _ of logs) break;
      after.push(getEventListeners(ac.signal, 'abort').length);
      await new Promise((r) => setImmediate(r));
      expect(after).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
