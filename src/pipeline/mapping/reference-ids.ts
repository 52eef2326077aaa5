/**
 * Deterministic referenceIds: UUIDv5 of `scope:key` (or `scope:key#suffix` for a sub-entity such
 * as an address) in the pipeline's namespace. The same legacy key always gives the same id, so a
 * relation to another legacy key resolves without a lookup and a re-run produces the same ids.
 */
import { parse, v5 } from 'uuid';

export class ReferenceIds {
  private readonly namespace: Uint8Array;

  constructor(readonly namespaceId: string) {
    this.namespace = parse(namespaceId);
  }

  /**
   * @example new ReferenceIds(ns).of('klant', '100234')            // the person's referenceId
   *          new ReferenceIds(ns).of('klant', '100234', 'address/main') // its main address
   */
  of(scope: string, key: string, suffix?: string): string {
    return v5(suffix === undefined ? `${scope}:${key}` : `${scope}:${key}#${suffix}`, this.namespace);
  }
}
