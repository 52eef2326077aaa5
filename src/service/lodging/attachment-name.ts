/**
 * Checks the client's attachment file name. The name is only ever a key in the database, never
 * part of a path, but names that look like paths or hide characters are refused anyway
 * (400 ATTACHMENT_INVALID_NAME), so nothing downstream (an export, a download, a log line) can
 * be tricked by them.
 */
import { WELL_KNOWN_ATTACHMENTS } from '../../contract/process.js';
import { HttpProblem } from '../http/problem.js';
import { LODGING_LIMITS } from './limits.js';

/**
 * Characters that change how a name is shown without being seen: zero-width characters, the
 * byte-order mark, and bidirectional controls that can make `invoice\u202Efdp.exe` read as
 * `invoiceexe.pdf`.
 */
const INVISIBLE_OR_BIDI =
  /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]/u;
/** Characters that look like "/" or "\\" (fullwidth, division and set-minus signs, fraction slash…). */
const LOOK_ALIKE_SEPARATORS = /[\u2044\u2215\u2216\u29f5\u29f8\u29f9\ufe68\uff0f\uff3c]/u;
/** Names Windows reserves for devices, with or without an extension (CON, NUL, COM1, LPT9…). */
const WINDOWS_DEVICE_NAME = /^(CON|PRN|AUX|NUL|COM[0-9¹²³]|LPT[0-9¹²³])(\.|$)/i;

/** `U+202E` for a character, as messages name characters that cannot be shown. */
const codePoint = (ch: string) => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

const WELL_KNOWN_BY_LOWER = new Map<string, string>(WELL_KNOWN_ATTACHMENTS.map((n) => [n.toLowerCase(), n]));

/**
 * Why `name` (as decoded from the URL) is not acceptable, or undefined when it is.
 * @example attachmentNameProblem('../../etc/passwd') // 'contains a path separator "/"'
 */
export function attachmentNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'is empty';
  if (name.length > LODGING_LIMITS.maxFileNameLength)
    return `is ${name.length} characters long; at most ${LODGING_LIMITS.maxFileNameLength} are allowed`;
  if (name.includes('\0')) return 'contains a NUL character';
  const control = /[\u0001-\u001f\u007f-\u009f]/.exec(name);
  if (control) return `contains the control character ${codePoint(control[0])}`;
  const invisible = INVISIBLE_OR_BIDI.exec(name);
  if (invisible) return `contains the invisible or direction-changing character ${codePoint(invisible[0])}`;
  const lookAlike = LOOK_ALIKE_SEPARATORS.exec(name);
  if (lookAlike) return `contains "${lookAlike[0]}" (${codePoint(lookAlike[0])}), which looks like a path separator`;
  if (name.includes('/')) return 'contains a path separator "/"';
  if (name.includes('\\')) return 'contains a path separator "\\"';
  if (name.includes('..')) return 'contains ".." (a parent-folder reference)';
  if (/%[0-9a-f]{2}/i.test(name)) return 'still contains a percent-encoded sequence after decoding (double encoding)';
  const reserved = /[:*?"<>|]/.exec(name);
  if (reserved) return `contains the reserved character "${reserved[0]}"`;
  if (/^\s|\s$/.test(name)) return 'starts or ends with white space';
  const device = WINDOWS_DEVICE_NAME.exec(name);
  if (device) return `is the Windows device name ${device[1]!.toUpperCase()} (such a file cannot be saved on Windows)`;
  if (name.startsWith('.')) return 'starts with "." (a hidden file, or an extension without a name)';
  if (!/^.+\.[A-Za-z0-9]{1,10}$/.test(name)) return 'has no file extension (expected a name such as "payslip.pdf")';
  const wellKnown = WELL_KNOWN_BY_LOWER.get(name.toLowerCase());
  if (wellKnown && wellKnown !== name)
    return `differs from the well-known name ${wellKnown} only in case; well-known names are case-sensitive`;
  return undefined;
}

/** Throws 400 ATTACHMENT_INVALID_NAME when the name is not acceptable. */
export function checkAttachmentName(name: string): void {
  const problem = attachmentNameProblem(name);
  if (problem) {
    throw new HttpProblem(400, 'ATTACHMENT_INVALID_NAME', `attachment file name ${JSON.stringify(name)} ${problem}`, {
      errors: [{ field: 'file-name', message: 'ATTACHMENT_INVALID_NAME' }],
    });
  }
}

/** Whether `name` is one of the seven well-known XML attachments. */
export function isWellKnown(name: string): boolean {
  return (WELL_KNOWN_ATTACHMENTS as readonly string[]).includes(name);
}
