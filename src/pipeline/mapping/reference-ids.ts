/**
 * Deterministic referenceIds: UUIDv5 of `scope:key` (or `scope:key#suffix` for a sub-entity such
 * as an address) in the pipeline's namespace. The same legacy key always gives the same id, so a
 * relation to another legacy key resolves without a lookup and a re-run produces the same ids.
 *
 * RFC 4122 v5 is sha1(namespace bytes ‖ name bytes) with the version and variant bits set. The
 * uuid package computes exactly that but costs about 2 µs an id (it re-encodes the name through
 * `unescape(encodeURIComponent())` and copies twice); a mapped person needs two or three ids, which
 * made ids the largest single cost of `plan`. So the hot path hashes with `crypto.hash` into a
 * reused buffer (about 0.5 µs), and falls back to `uuid.v5` for very long names. The unit tests
 * hold both to the same output (test/unit/pipeline-mapping.test.ts).
 */
import * as crypto from 'node:crypto';
import { parse, v5 } from 'uuid';

const oneShot = (crypto as { hash?: (alg: string, data: Uint8Array, enc: 'hex') => string }).hash;
const sha1Hex = oneShot ? (data: Uint8Array) => oneShot('sha1', data, 'hex') : (data: Uint8Array) => crypto.createHash('sha1').update(data).digest('hex');
const VARIANT = '89ab';

export class ReferenceIds {
  private readonly namespace: Uint8Array;
  private readonly scratch = Buffer.allocUnsafe(16 + 1024);
  /**
   * `scratch.subarray(0, 16 + n)` by name length n, made once: a new view per id was a sixth of
   * an id's cost (best of eight rounds, 200,000 persons' two ids: 1.32–1.62 against 1.60–1.87 µs).
   */
  private readonly views: Buffer[] = [];

  constructor(readonly namespaceId: string) {
    this.namespace = parse(namespaceId);
    this.scratch.set(this.namespace, 0);
  }

  /**
   * @example new ReferenceIds(ns).of('crm-klant', '100234')                 // the person's referenceId
   *          new ReferenceIds(ns).of('crm-klant', '100234', 'address/main') // its main address
   */
  of(scope: string, key: string, suffix?: string): string {
    const name = suffix === undefined ? `${scope}:${key}` : `${scope}:${key}#${suffix}`;
    if (name.length * 3 > this.scratch.length - 16) return v5(name, this.namespace);
    const n = this.scratch.write(name, 16, 'utf8');
    const h = sha1Hex((this.views[n] ??= this.scratch.subarray(0, 16 + n)));
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${VARIANT[parseInt(h[16]!, 16) & 3]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }

  /** The same id through the uuid package (the reference the fast path is tested against). */
  reference(scope: string, key: string, suffix?: string): string {
    return v5(suffix === undefined ? `${scope}:${key}` : `${scope}:${key}#${suffix}`, this.namespace);
  }
}
