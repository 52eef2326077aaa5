/**
 * Functions written as source text at load (`new Function`), for the few hot spots where naming
 * each field in the code is what makes V8 fast (see the callers). Where code generation from
 * strings is disallowed (`node --disallow-code-generation-from-strings`, as some hardened
 * deployments run), this answers `undefined` and the caller uses its plain loop instead, which
 * gives the same result more slowly; zod does the same for its own generated parsers.
 */

let allowed: boolean | undefined;
/** Makes every generated text distinct (see `generated`). */
let serial = 0;

/**
 * @example const add = generated<(a: number, b: number) => number>(['a', 'b'], 'return a + b;') ?? ((a, b) => a + b);
 */
export function generated<F>(params: readonly string[], body: string): F | undefined {
  if (allowed === false) return undefined;
  try {
    // V8 caches functions compiled from equal text, and their type feedback with them: the serial
    // keeps two generated functions (one per mapped field, say) from sharing it.
    const fn = new Function(...params, `${body}\n// ${++serial}`) as F;
    allowed = true;
    return fn;
  } catch (err) {
    // V8 refuses with an EvalError before it looks at the text; any other error is a bug here.
    if (!(err instanceof EvalError)) throw err;
    allowed = false;
    return undefined;
  }
}

/**
 * A copy of a closure factory compiled on its own, so that the closures it makes keep type
 * feedback of their own. V8 keeps one feedback vector per function literal, which every closure
 * made from it shares: a reader made once per mapped column sees every column's name at its
 * property read, and a call in a step runner sees every field's steps, and both go megamorphic.
 * A copy compiled from the factory's text is a new literal. The factory must use nothing but its
 * parameters and globals (the copy is compiled at global scope); where code generation is
 * disallowed it is used as it is, with the same results.
 * @example const reader = ownCopy((column: string) => (values: Values) => values[column])('naam');
 */
export function ownCopy<F extends (...args: never[]) => unknown>(factory: F): F {
  return generated<() => F>([], `return (${factory.toString()});`)?.() ?? factory;
}
