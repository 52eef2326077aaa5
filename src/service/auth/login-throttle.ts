/**
 * Slows brute force on the token endpoint: after `maxFailures` failed attempts for one client id
 * from one address within `windowMs`, further attempts get 429 with Retry-After until the window
 * has passed. A success clears the count.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, { count: number; first: number }>();
  constructor(
    private readonly maxFailures = 10,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds to wait before another attempt, 0 if allowed. */
  retryAfter(key: string): number {
    const entry = this.failures.get(key);
    if (!entry) return 0;
    const elapsed = this.now() - entry.first;
    if (elapsed >= this.windowMs) {
      this.failures.delete(key);
      return 0;
    }
    return entry.count >= this.maxFailures ? Math.ceil((this.windowMs - elapsed) / 1000) : 0;
  }

  fail(key: string): void {
    const entry = this.failures.get(key);
    if (!entry || this.now() - entry.first >= this.windowMs) this.failures.set(key, { count: 1, first: this.now() });
    else entry.count++;
    if (this.failures.size > 10_000) this.failures.delete(this.failures.keys().next().value!);
  }

  succeed(key: string): void {
    this.failures.delete(key);
  }
}
