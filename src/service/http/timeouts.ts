/**
 * How long the service waits for a client, as fastify / Node http server options. Fastify's
 * defaults wait forever (`connectionTimeout` and `requestTimeout` 0), so an upload whose body
 * stopped coming held its connection (and its staging request) open for good. Three bounds:
 *  - idle: a connection that sends and receives nothing for `idleTimeoutMs` is closed (Node's
 *    `server.timeout`, fastify `connectionTimeout`): a body that stops is cut however big it is;
 *  - request: the whole request, headers and body, within `requestTimeoutMs` (Node answers 408):
 *    generous, so an upload of the 512 MiB staging limit on a slow link still fits;
 *  - headers: the request line and headers within `headersTimeoutMs` (Node answers 408).
 * Node checks the last two on a timer (`connectionsCheckingInterval`, 30 s by default), so a
 * bound is kept only to within one interval: checking every quarter of the 60 s headers bound
 * answered 408 after up to 75 s (74.5 s measured). The interval here is a twentieth of the
 * headers bound, at least 100 ms and at most 1 s: 408 comes within 1 s after a bound of a minute
 * and within 5 % after a short one, and a check of the open connections each second costs
 * nothing that shows.
 */
import type { ServiceConfig } from '../config.js';

type Timeouts = Pick<ServiceConfig, 'idleTimeoutMs' | 'requestTimeoutMs' | 'headersTimeoutMs'>;

/**
 * @example Fastify({ ...httpTimeouts(config), … })
 */
export function httpTimeouts(config: Timeouts) {
  // Node requires headersTimeout <= requestTimeout.
  const headersTimeout = Math.min(config.headersTimeoutMs, config.requestTimeoutMs);
  const checkEvery = Math.max(100, Math.min(1_000, Math.floor(headersTimeout / 20)));
  return {
    connectionTimeout: config.idleTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    http: { headersTimeout, connectionsCheckingInterval: checkEvery },
  };
}
