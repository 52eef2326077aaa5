/**
 * Duplicated keys in JSON text, which `JSON.parse` resolves silently (the last one wins, even for
 * the key column). A JSON Lines line is parsed with `JSON.parse` (fast); whether any key of it,
 * at any depth, was dropped is told without a second parse: every `:` of the text outside a
 * string stands for one key, so the text's colons equal the parsed value's keys plus the colons
 * inside its strings, unless a duplicate was dropped. Only when they differ (or the text writes a
 * colon as `\u003a`) is the text walked to name the duplicated key (`duplicateKeyIn`).
 */

/** Nesting walked by recursion (fast); a deeper value is walked with a stack of its own. */
const RECURSION = 64;

/** Keys of a parsed JSON value, at every depth, plus the colons inside its strings (keys and values). */
function keysAndColons(v: unknown, depth: number): number {
  if (typeof v === 'string') return v.indexOf(':') < 0 ? 0 : colons(v);
  if (typeof v !== 'object' || v === null) return 0;
  if (depth > RECURSION) return keysAndColonsDeep(v);
  let n = 0;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) n += keysAndColons(v[i], depth + 1);
    return n;
  }
  for (const k in v) {
    n += k.indexOf(':') < 0 ? 1 : 1 + colons(k);
    n += keysAndColons((v as Record<string, unknown>)[k], depth + 1);
  }
  return n;
}

/** The same count without recursion, for a value nested deeper than `RECURSION`. */
function keysAndColonsDeep(value: unknown): number {
  let n = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') n += colons(v);
    else if (Array.isArray(v)) for (const item of v) stack.push(item);
    else if (v !== null && typeof v === 'object') {
      for (const k in v) {
        n += 1 + colons(k);
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
  }
  return n;
}

function colons(s: string): number {
  let n = 0;
  for (let i = s.indexOf(':'); i !== -1; i = s.indexOf(':', i + 1)) n++;
  return n;
}

/**
 * The dotted path of the first duplicated key of `text` (valid JSON that parsed to `value`), or
 * undefined when no key repeats within its object.
 * @example duplicatedKey('{"id":"2","id":"3"}', { id: '3' }) // 'id'
 */
export function duplicatedKey(text: string, value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (colons(text) === keysAndColons(value, 0) && !text.includes('\\u003a') && !text.includes('\\u003A')) return undefined;
  return duplicateKeyIn(text);
}

/** The dotted path of the first key that repeats within its object in valid JSON `text`; undefined when none does. */
export function duplicateKeyIn(text: string): string | undefined {
  // Each open container: the keys met so far (objects), or the index reached (arrays), and the path to it.
  const frames: { keys: Set<string> | undefined; index: number; path: string }[] = [];
  let pendingKey: string | undefined; // the last key read, waiting for its value
  const childPath = (): string => {
    const top = frames.at(-1);
    if (!top) return '';
    const part = top.keys ? (pendingKey ?? '') : `[${top.index}]`;
    return top.keys ? (top.path ? `${top.path}.${part}` : part) : `${top.path}${part}`;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // a string: find its end, past escapes
      let j = i + 1;
      for (;;) {
        const q = text.indexOf('"', j);
        let bs = 0;
        while (text.charCodeAt(q - 1 - bs) === 0x5c) bs++;
        if (bs % 2 === 0) {
          j = q;
          break;
        }
        j = q + 1;
      }
      const top = frames.at(-1);
      let k = j + 1;
      while (
        k < text.length &&
        (text.charCodeAt(k) === 0x20 || text.charCodeAt(k) === 0x09 || text.charCodeAt(k) === 0x0a || text.charCodeAt(k) === 0x0d)
      )
        k++;
      if (top?.keys && text.charCodeAt(k) === 0x3a) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) return top.path ? `${top.path}.${key}` : key;
        top.keys.add(key);
        pendingKey = key;
      }
      i = j;
    } else if (c === 0x7b || c === 0x5b) {
      frames.push({ keys: c === 0x7b ? new Set() : undefined, index: 0, path: childPath() });
    } else if (c === 0x7d || c === 0x5d) {
      frames.pop();
    } else if (c === 0x2c) {
      const top = frames.at(-1);
      if (top && !top.keys) top.index++;
    }
  }
  return undefined;
}
