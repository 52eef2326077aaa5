/**
 * Functions written as source text at load (`new Function`), for the few hot spots where naming
 * each field in the code is what makes V8 fast (see the callers). Where code generation from
 * strings is disallowed (`node --disallow-code-generation-from-strings`, as some hardened
 * deployments run), this answers `undefined` and the caller uses its plain loop instead, which
 * gives the same result more slowly; zod does the same for its own generated parsers.
 */

let allowed: boolean | undefined;

/**
 * @example const add = generated<(a: number, b: number) => number>(['a', 'b'], 'return a + b;') ?? ((a, b) => a + b);
 */
export function generated<F>(params: readonly string[], body: string): F | undefined {
  if (allowed === false) return undefined;
  try {
    const fn = new Function(...params, body) as F;
    allowed = true;
    return fn;
  } catch (err) {
    // V8 refuses with an EvalError before it looks at the text; any other error is a bug here.
    if (!(err instanceof EvalError)) throw err;
    allowed = false;
    return undefined;
  }
}
