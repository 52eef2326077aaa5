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
 *
 * The id is written as text into a reused buffer and read out as one flat string: put together
 * from slices of the hex digest, it was a tree of a dozen small strings (about 430 bytes of
 * garbage an id, three ids a person; 2,000,000 ids: 151 against 333 scavenges).
 */
import * as crypto from 'node:crypto';
import { parse, v5 } from 'uuid';

const oneShot = (crypto as { hash?: (alg: string, data: Uint8Array, enc: 'binary') => string }).hash;
/** sha1 as a string of 20 one-byte characters ('binary' is Node's other name for latin1). */
const sha1Bytes = oneShot
  ? (data: Uint8Array) => oneShot('sha1', data, 'binary')
  : (data: Uint8Array) => crypto.createHash('sha1').update(data).digest('binary');
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');

export class ReferenceIds {
  private readonly namespace: Uint8Array;
  private readonly scratch = Buffer.allocUnsafe(16 + 1024);
  /**
   * `scratch.subarray(0, 16 + n)` by name length n, made once: a new view per id was a sixth of
   * an id's cost (best of eight rounds, 200,000 persons' two ids: 1.32–1.62 against 1.60–1.87 µs).
   */
  private readonly views: Buffer[] = [];
  /** Where an id is written as text (36 characters) before it is read out as one string. */
  private readonly text = Buffer.allocUnsafe(36);

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
    const digest = sha1Bytes((this.views[n] ??= this.scratch.subarray(0, 16 + n)));
    const text = this.text;
    let at = 0;
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) text[at++] = 0x2d; // '-'
      let byte = digest.charCodeAt(i);
      if (i === 6)
        byte = (byte & 0x0f) | 0x50; // version 5
      else if (i === 8) byte = (byte & 0x3f) | 0x80; // RFC 4122 variant
      text[at++] = HEX_DIGITS[byte >> 4]!;
      text[at++] = HEX_DIGITS[byte & 0x0f]!;
    }
    return text.toString('latin1', 0, 36);
  }

  /** The same id through the uuid package (the reference the fast path is tested against). */
  reference(scope: string, key: string, suffix?: string): string {
    return v5(suffix === undefined ? `${scope}:${key}` : `${scope}:${key}#${suffix}`, this.namespace);
  }
}
