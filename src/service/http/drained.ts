/**
 * Waits until a response can take more bytes ('drain') or the work is called off, whichever
 * comes first: the one backpressure wait of the service's streaming routes.
 */
import type { ServerResponse } from 'node:http';

export function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    res.once('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}
