/**
 * Checks the client's attachment file name. The name is only ever a key in the database, never
 * part of a path, but names that look like paths or hide characters are refused anyway
 * (400 ATTACHMENT_INVALID_NAME), so nothing downstream (an export, a download, a log line) can
 * be tricked by them.
 */
import { WELL_KNOWN_ATTACHMENTS } from '../../contract/process.js';
import { HttpProblem } from '../http/problem.js';
import { LODGING_LIMITS } from './limits.js';

const WELL_KNOWN_BY_LOWER = new Map<string, string>(WELL_KNOWN_ATTACHMENTS.map((n) => [n.toLowerCase(), n]));

/**
 * Why `name` (as decoded from the URL) is not acceptable, or undefined when it is.
 * @example attachmentNameProblem('../../etc/passwd') // 'contains a path separator "/"'
 */
export function attachmentNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'is empty';
  if (name.length > LODGING_LIMITS.maxFileNameLength) return `is ${name.length} characters long; at most ${LODGING_LIMITS.maxFileNameLength} are allowed`;
  if (name.includes('\0')) return 'contains a NUL character';
  const control = /[\u0001-\u001f\u007f-\u009f]/.exec(name);
  if (control) return `contains the control character U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  if (name.includes('/')) return 'contains a path separator "/"';
  if (name.includes('\\')) return 'contains a path separator "\\"';
  if (name.includes('..')) return 'contains ".." (a parent-folder reference)';
  if (/%[0-9a-f]{2}/i.test(name)) return 'still contains a percent-encoded sequence after decoding (double encoding)';
  const reserved = /[:*?"<>|]/.exec(name);
  if (reserved) return `contains the reserved character "${reserved[0]}"`;
  if (/^\s|\s$/.test(name)) return 'starts or ends with white space';
  if (name.startsWith('.')) return 'starts with "." (a hidden file, or an extension without a name)';
  if (!/^.+\.[A-Za-z0-9]{1,10}$/.test(name)) return 'has no file extension (expected a name such as "payslip.pdf")';
  const wellKnown = WELL_KNOWN_BY_LOWER.get(name.toLowerCase());
  if (wellKnown && wellKnown !== name) return `differs from the well-known name ${wellKnown} only in case; well-known names are case-sensitive`;
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
