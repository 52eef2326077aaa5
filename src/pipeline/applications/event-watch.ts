/**
 * The run's own webhook receiver for application outcomes: listens on loopback, subscribes to
 * the handling and process-status events with the tokens the platform gives each subscription
 * (X-Event-Token checked by the client's receiver, duplicates dropped), hands each event on,
 * and removes its subscriptions at the end. Polling (src/reconcile/applications.ts) stays the fallback
 * for events that do not arrive.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StagecoachClient } from '../../client/index.js';
import { createWebhookReceiver, type ReceivedEvent } from '../../client/webhook-receiver.js';

export const APPLICATION_EVENTS = [
  'lodging.message.handling_succeeded',
  'lodging.message.handling_failed',
  'process.status-changed',
] as const;

export interface EventWatch {
  /** Unsubscribes (best effort: a failure is returned, not thrown) and stops listening. */
  close(): Promise<string[]>;
}

/**
 * @example const watch = await watchApplicationEvents(client, (e) => …); …; await watch.close();
 */
export async function watchApplicationEvents(
  client: StagecoachClient,
  onEvent: (event: ReceivedEvent) => void,
  signal?: AbortSignal,
): Promise<EventWatch> {
  const tokens = new Map<string, string>();
  const receiver = createWebhookReceiver({ tokens: (name) => (name ? tokens.get(name) : undefined), onEvent });
  const server = createServer((req, res) => void receiver(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/applications-events`;
  const registered: Array<{ event: string; id: string }> = [];
  const close = async (): Promise<string[]> => {
    const failures: string[] = [];
    for (const r of registered.splice(0)) {
      await client.events.unsubscribe(r.event, r.id).catch((err: Error) => failures.push(`${r.event} ${r.id}: ${err.message}`));
    }
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return failures;
  };
  try {
    for (const event of APPLICATION_EVENTS) {
      const reg = await client.events.subscribe(event, uri, signal ? { signal } : {});
      tokens.set(event, reg.token);
      registered.push({ event, id: reg.id });
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { close };
}
