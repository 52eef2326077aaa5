/**
 * Strict reading of the integer query parameters of the list and the stream: anything but a
 * plain decimal integer in range is refused with 400 INVALID_QUERY_PARAMETER naming the
 * parameter, the value and what was expected.
 */
import { HttpProblem } from '../http/problem.js';

/**
 * @example readIntegerParam(request.query, 'limit', { min: 1, max: 100, fallback: 20 }) // 20 when absent
 */
export function readIntegerParam(query: unknown, name: string, range: { min: number; max?: number; fallback: number }): number {
  const raw = (query as Record<string, unknown> | undefined)?.[name];
  if (raw === undefined) return range.fallback;
  const expected = range.max === undefined ? `an integer ≥ ${range.min}` : `an integer from ${range.min} to ${range.max}`;
  const refuse = (shown: string) =>
    new HttpProblem(400, 'INVALID_QUERY_PARAMETER', `query parameter ${name}: expected ${expected}, got ${shown}`, {
      errors: [{ field: name, message: 'INVALID_QUERY_PARAMETER' }],
    });
  if (Array.isArray(raw)) throw refuse(`${raw.length} values (${raw.map((v) => `"${String(v)}"`).join(', ')})`);
  const text = String(raw);
  if (!/^-?\d+$/.test(text.trim()) || text.trim() !== text) throw refuse(`"${text}"`);
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < range.min || (range.max !== undefined && value > range.max)) throw refuse(`"${text}"`);
  return value;
}
