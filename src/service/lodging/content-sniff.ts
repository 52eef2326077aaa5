/**
 * The attachment types the service accepts, and the check that the declared `mimeType`, the
 * file name's extension and the actual bytes agree: the first bytes are sniffed (magic numbers:
 * `%PDF-`, the PNG signature, JPEG's FF D8 FF, ZIP's `PK\3\4` for DOCX/XLSX, `<` for XML,
 * valid UTF-8 without control characters for plain text).
 */
import { HttpProblem } from '../http/problem.js';

interface AcceptedType {
  /** What the content is, for messages. */
  kind: string;
  mimeTypes: readonly string[];
  extensions: readonly string[];
  sniff: (bytes: Buffer) => boolean;
}

const startsWith = (bytes: Buffer, signature: readonly number[]) => signature.every((b, i) => bytes[i] === b);
const ZIP = [0x50, 0x4b, 0x03, 0x04];

/**
 * The first bytes of an XML document in an encoding that is not ASCII-compatible (XML 1.0,
 * appendix F): byte-order marks, or `<?` / `<` as UTF-16 / UTF-32 without one, or `<?xm` in
 * EBCDIC. Such a document is still XML (so its mimeType is right), but the service refuses it
 * as XML it will not read (xml-validation).
 */
const FOREIGN_XML_SIGNATURES: ReadonlyArray<[string, readonly number[]]> = [
  ['UTF-32BE', [0x00, 0x00, 0xfe, 0xff]],
  ['UTF-32LE', [0xff, 0xfe, 0x00, 0x00]],
  ['UTF-32BE', [0x00, 0x00, 0x00, 0x3c]],
  ['UTF-32LE', [0x3c, 0x00, 0x00, 0x00]],
  ['UTF-16BE', [0xfe, 0xff]],
  ['UTF-16LE', [0xff, 0xfe]],
  ['UTF-16BE', [0x00, 0x3c, 0x00]],
  ['UTF-16LE', [0x3c, 0x00]],
  ['EBCDIC', [0x4c, 0x6f, 0xa7, 0x94]],
];

/** The encoding an XML document announces by its first bytes when that is not ASCII-compatible. */
export function foreignXmlEncoding(bytes: Buffer): string | undefined {
  return FOREIGN_XML_SIGNATURES.find(([, signature]) => startsWith(bytes, signature))?.[0];
}

/**
 * XML: optional UTF-8 BOM and white space, then `<` followed by `?xml`, `!--`, or a name; or
 * the start of an XML document in UTF-16, UTF-32 or EBCDIC.
 */
function looksLikeXml(bytes: Buffer): boolean {
  if (foreignXmlEncoding(bytes)) return true;
  let i = startsWith(bytes, [0xef, 0xbb, 0xbf]) ? 3 : 0;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  if (bytes[i] !== 0x3c) return false;
  const next = bytes[i + 1];
  return (
    next !== undefined &&
    (next === 0x3f || next === 0x21 || next === 0x5f || next === 0x3a || ((next | 0x20) >= 0x61 && (next | 0x20) <= 0x7a) || next >= 0x80)
  );
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
/** Plain text: valid UTF-8 without control characters other than tab, newline, CR and form feed. */
function looksLikeText(bytes: Buffer): boolean {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return false;
  }
  return !/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/.test(text);
}

export const ACCEPTED_TYPES: readonly AcceptedType[] = [
  { kind: 'XML', mimeTypes: ['application/xml', 'text/xml'], extensions: ['xml'], sniff: looksLikeXml },
  { kind: 'PDF', mimeTypes: ['application/pdf'], extensions: ['pdf'], sniff: (b) => startsWith(b, [0x25, 0x50, 0x44, 0x46, 0x2d]) },
  {
    kind: 'PNG image',
    mimeTypes: ['image/png'],
    extensions: ['png'],
    sniff: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  },
  { kind: 'JPEG image', mimeTypes: ['image/jpeg'], extensions: ['jpg', 'jpeg'], sniff: (b) => startsWith(b, [0xff, 0xd8, 0xff]) },
  {
    kind: 'Word document (DOCX)',
    mimeTypes: ['application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
    extensions: ['docx'],
    sniff: (b) => startsWith(b, ZIP),
  },
  {
    kind: 'Excel workbook (XLSX)',
    mimeTypes: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
    extensions: ['xlsx'],
    sniff: (b) => startsWith(b, ZIP),
  },
  { kind: 'ZIP archive', mimeTypes: ['application/zip'], extensions: ['zip'], sniff: (b) => startsWith(b, ZIP) },
  { kind: 'plain text', mimeTypes: ['text/plain'], extensions: ['txt'], sniff: looksLikeText },
  { kind: 'CSV text', mimeTypes: ['text/csv'], extensions: ['csv'], sniff: looksLikeText },
];

export const ACCEPTED_MIME_TYPES: readonly string[] = ACCEPTED_TYPES.flatMap((t) => t.mimeTypes);

/** The bare, lower-cased media type of a declared mimeType (`text/plain; charset=utf-8` → `text/plain`). */
export function bareMimeType(declared: string): string {
  return (declared.split(';')[0] ?? '').trim().toLowerCase();
}

/** What the bytes look like, for messages ("PDF", "PNG image", …, or "unrecognised content"). */
export function describeContent(bytes: Buffer): string {
  return ACCEPTED_TYPES.find((t) => t.kind !== 'CSV text' && t.sniff(bytes))?.kind ?? 'unrecognised binary content';
}

/**
 * Checks that the declared type is accepted (else 415 UNSUPPORTED_MEDIA_TYPE), that the bytes
 * are of that type and that the name's extension fits it (else 415 ATTACHMENT_MIME_MISMATCH).
 * Returns the bare media type to store.
 * @example checkContentType('offer.pdf', 'application/pdf', bytes) // 'application/pdf'
 */
export function checkContentType(fileName: string, declared: string, bytes: Buffer): string {
  const mimeType = bareMimeType(declared);
  const type = ACCEPTED_TYPES.find((t) => t.mimeTypes.includes(mimeType));
  if (!type) {
    throw new HttpProblem(
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      `mimeType ${JSON.stringify(declared)} is not accepted for attachments; accepted: ${ACCEPTED_MIME_TYPES.join(', ')}`,
      {
        errors: [{ field: 'mimeType', message: 'UNSUPPORTED_MEDIA_TYPE' }],
      },
    );
  }
  if (!type.sniff(bytes)) {
    throw new HttpProblem(
      415,
      'ATTACHMENT_MIME_MISMATCH',
      `${fileName}: mimeType ${mimeType} does not match the content: expected ${type.kind}, got ${describeContent(bytes)}`,
      {
        errors: [{ field: 'mimeType', message: 'ATTACHMENT_MIME_MISMATCH' }],
      },
    );
  }
  const extension = (fileName.split('.').pop() ?? '').toLowerCase();
  if (!type.extensions.includes(extension)) {
    throw new HttpProblem(
      415,
      'ATTACHMENT_MIME_MISMATCH',
      `${fileName}: the extension .${extension} does not fit mimeType ${mimeType}; expected ${type.extensions.map((e) => '.' + e).join(' or ')}`,
      {
        errors: [{ field: 'file-name', message: 'ATTACHMENT_MIME_MISMATCH' }],
      },
    );
  }
  return mimeType;
}

/** Whether a stored media type is XML. */
export function isXmlMimeType(mimeType: string): boolean {
  return ACCEPTED_TYPES[0]!.mimeTypes.includes(mimeType);
}
