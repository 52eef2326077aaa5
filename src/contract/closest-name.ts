/**
 * "Did you mean …?": the known name a misspelt one was most likely meant to be. One rule for
 * every message that suggests a name (pipeline and mapping keys, config keys, event names):
 * case-insensitive Levenshtein distance, close enough when at most 2 or a third of the length.
 */
import { distance } from 'fastest-levenshtein';

/**
 * @example closestName('quoute', ['quote', 'delimiter']) // 'quote'
 * @example closestName('xyz', ['quote']) // undefined
 */
export function closestName(given: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const k of known) {
    const d = distance(given.toLowerCase(), k.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(given.length / 3)) ? best : undefined;
}
