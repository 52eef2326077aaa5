/**
 * Counters of the fault layer, for reliability tests and soak runs: how many requests the
 * service saw, how many faults actually fired (by kind and status), and the largest number of
 * requests in progress at once per route — so a test can show from the service's side that a
 * client stayed within its in-flight bound while faults were injected, and how many faults it
 * survived. Read and reset through GET/DELETE /_admin/faults/stats (route-admin.ts).
 *
 * A request counts as in progress from the fault layer's onRequest hook until its response
 * closes (finished, or the connection dropped): one map update and one 'close' listener per
 * request.
 */
import type { ServerResponse } from 'node:http';
import type { FaultKind } from './rules.js';

export interface FaultStatsView {
  /** Requests seen (the admin endpoint excluded). */
  requests: number;
  /** Requests seen per "METHOD /route/:param". */
  routes: Record<string, number>;
  /** Requests that met at least one fault that fired. */
  faulted: number;
  /** Faults that took effect, by kind (a cut counts when a stream was cut, a body reset when the socket was destroyed). */
  fired: Record<FaultKind, number>;
  /** Injected error answers by status. */
  statuses: Record<string, number>;
  /** Largest number of requests in progress at once, per "METHOD /route/:param" (and "*" for all routes). */
  maxConcurrent: Record<string, number>;
  /** Requests in progress now, per route (normally empty between runs). */
  inProgress: Record<string, number>;
  /** When the counters were last reset (ISO time). */
  since: string;
}

export class FaultStats {
  private requests = 0;
  private routes = new Map<string, number>();
  private faulted = 0;
  private readonly fired: Record<FaultKind, number> = { status: 0, latency: 0, reset: 0, cut: 0 };
  private statuses: Record<string, number> = {};
  private active = new Map<string, number>();
  private max = new Map<string, number>();
  private since = new Date().toISOString();

  /** Counts a request in progress on `route` until `res` closes. */
  track(route: string, res: ServerResponse): void {
    this.requests++;
    this.routes.set(route, (this.routes.get(route) ?? 0) + 1);
    this.enter(route);
    this.enter('*');
    res.once('close', () => {
      this.leave(route);
      this.leave('*');
    });
  }

  /** A request met at least one fault that fired. */
  faultedRequest(): void {
    this.faulted++;
  }

  /** A fault of this kind took effect (with its status, for error answers). */
  fire(kind: FaultKind, status?: number): void {
    this.fired[kind]++;
    if (status !== undefined) this.statuses[status] = (this.statuses[status] ?? 0) + 1;
  }

  view(): FaultStatsView {
    return {
      requests: this.requests,
      routes: Object.fromEntries(this.routes),
      faulted: this.faulted,
      fired: { ...this.fired },
      statuses: { ...this.statuses },
      maxConcurrent: Object.fromEntries(this.max),
      inProgress: Object.fromEntries([...this.active].filter(([, n]) => n > 0)),
      since: this.since,
    };
  }

  /** Starts counting afresh (requests in progress stay counted until they close). */
  reset(): void {
    this.requests = 0;
    this.routes = new Map();
    this.faulted = 0;
    for (const k of Object.keys(this.fired) as FaultKind[]) this.fired[k] = 0;
    this.statuses = {};
    this.max = new Map([...this.active].filter(([, n]) => n > 0));
    this.since = new Date().toISOString();
  }

  private enter(route: string): void {
    const n = (this.active.get(route) ?? 0) + 1;
    this.active.set(route, n);
    if (n > (this.max.get(route) ?? 0)) this.max.set(route, n);
  }

  private leave(route: string): void {
    this.active.set(route, (this.active.get(route) ?? 1) - 1);
  }
}
