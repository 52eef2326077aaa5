/**
 * The one way a value is cut before stagecoach echoes it: in a message, in the ledger, in a
 * report. A legacy export can hold a field of 60 MiB (a broken export, a pasted document); echoed
 * whole, one such value made `plan` print a 62.9 MB line and grew the ledger by 126 MB. Every
 * echo goes through here, so no message, ledger row or report line grows with the input.
 */

/** Characters of a value shown in a message (longer ones end in `…`). */
export const SHOWN_CHARS = 60;

/** Characters of a message kept in the ledger and reports (it holds cut values, so this is a backstop). */
export const MESSAGE_CHARS = 1000;

/**
 * A text cut to `max` characters, the cut marked with `…`.
 * @example cutText('x'.repeat(100)) // 'xxx…' (60 characters in all)
 */
export function cutText(text: string, max: number = SHOWN_CHARS): string {
  return text.length > max ? `${text.slice(0, max - 3)}…` : text;
}

/** How many names (columns, fields) a message lists before it only counts the rest. */
export const SHOWN_NAMES = 30;

/**
 * Names as a message lists them: each quoted and cut, the first `SHOWN_NAMES`, then how many in
 * all. A file without a line break is all header: its one "name" can be 50 MB.
 * @example quotedNames(['nr', 'surname']) // '"nr", "surname"'
 */
export function quotedNames(list: readonly string[]): string {
  const shown = list
    .slice(0, SHOWN_NAMES)
    .map((c) => JSON.stringify(cutText(c)))
    .join(', ');
  return list.length > SHOWN_NAMES ? `${shown} … (${list.length} in all)` : shown;
}

/**
 * A value as a message shows it: its text (JSON for anything but a string) cut, in backticks;
 * `nothing` when there is none.
 * @example `got ${showValue(value)}` // 'got `01-12-19959999…`'
 */
export function showValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return `\`${cutText(text ?? String(value))}\``;
}

/**
 * A value as the ledger keeps it beside an error: strings cut; anything else as its JSON text,
 * cut, when that is long (a cut JSON text is no longer JSON, so it stays a string).
 * @example cutValue('x'.repeat(1e6)).length // 60
 */
export function cutValue(value: unknown): unknown {
  if (typeof value === 'string') return cutText(value);
  if (value === null || typeof value !== 'object') return value;
  const text = JSON.stringify(value);
  return text.length > SHOWN_CHARS ? cutText(text) : value;
}
