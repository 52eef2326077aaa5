/**
 * Safe checking of XML attachments with libxml2 (WebAssembly): no DOCTYPE / DTD / ENTITY
 * declarations at all (refused by a byte scan before any parser sees the document, so neither
 * external entities nor entity expansion can happen), then a parse with network and external
 * entity loading off and entity substitution never enabled, then — for the seven well-known
 * files — validation against the service's XSDs in `schemas/`. Synchronous; a document takes a
 * few milliseconds. Every libxml2 object is disposed.
 */
import { XmlDocument, XmlLibError } from 'libxml2-wasm';
import { LODGING_NAMESPACE, SAFE_PARSE_OPTIONS, schemaDir, schemaErrors } from '../../lodging-xml/xsd-validation.js';
import { HttpProblem } from '../http/problem.js';
import { LODGING_LIMITS } from './limits.js';
import { foreignXmlEncoding } from './content-sniff.js';

// The XSDs and their validation are shared with the client (src/lodging-xml/); re-exported for this module's users.
export { LODGING_NAMESPACE, SAFE_PARSE_OPTIONS, schemaDir };

const FORBIDDEN_DECLARATION = /<!\s*(DOCTYPE|ENTITY|ELEMENT|ATTLIST|NOTATION)/i;

/** The 1-based line of byte offset `index`. */
function lineAt(bytes: Buffer, index: number): number {
  let line = 1;
  for (let i = bytes.indexOf(0x0a); i !== -1 && i < index; i = bytes.indexOf(0x0a, i + 1)) line++;
  return line;
}

/**
 * Refuses what the service will not parse: encodings that are not ASCII-compatible (the byte
 * scan below reads the document as ASCII) and any DOCTYPE or markup declaration.
 */
function refuseUnsafe(fileName: string, bytes: Buffer): void {
  const foreign = foreignXmlEncoding(bytes) ?? declaredForeignEncoding(bytes);
  if (foreign) throw notUtf8(fileName, `the content is ${foreign}`);
  const nul = bytes.indexOf(0);
  if (nul !== -1) throw notUtf8(fileName, `the content has a NUL byte at line ${lineAt(bytes, nul)}`);
  const text = bytes.toString('latin1');
  const match = FORBIDDEN_DECLARATION.exec(text);
  if (match) {
    const line = lineAt(bytes, match.index);
    throw new HttpProblem(
      422,
      'ATTACHMENT_FORBIDDEN_DTD',
      `${fileName}: line ${line}: a <!${match[1]!.toUpperCase()} declaration is not allowed; XML attachments must not contain a DOCTYPE, DTD or entity declarations`,
      {
        errors: [{ field: match[1]!.toUpperCase(), message: `line ${line}: DTD and entity declarations are not allowed` }],
      },
    );
  }
}

function notUtf8(fileName: string, detail: string): HttpProblem {
  return new HttpProblem(
    422,
    'ATTACHMENT_MALFORMED_XML',
    `${fileName}: XML attachments must be encoded as UTF-8 (or an ASCII-compatible encoding); ${detail}`,
    {
      errors: [{ field: 'encoding', message: 'ATTACHMENT_MALFORMED_XML' }],
    },
  );
}

/**
 * An encoding named in the XML declaration that is not ASCII-compatible (UTF-7, UTF-16/32,
 * EBCDIC code pages): the DOCTYPE scan reads bytes as ASCII, so such a document could hide a
 * declaration from it (UTF-7 spells `<` as `+ADw-`).
 */
function declaredForeignEncoding(bytes: Buffer): string | undefined {
  const declaration = /^(?:\xef\xbb\xbf)?\s*<\?xml[^>]*?encoding\s*=\s*["']([^"']+)["']/.exec(bytes.subarray(0, 200).toString('latin1'));
  const name = declaration?.[1];
  if (!name) return undefined;
  return /^(utf-?(7|16|32)|ucs-?[24]|(ibm|cp)0?(37|273|277|278|280|284|285|297|500|870|871|875|1026|1047|114[0-9])$|ebcdic)/i.test(name)
    ? `declared as ${name}`
    : undefined;
}

/**
 * Parses an XML attachment safely (after the DTD refusal). The caller must dispose the document.
 * Throws 422 ATTACHMENT_MALFORMED_XML with the line of each parser error.
 */
export function parseXmlSafely(fileName: string, bytes: Buffer): XmlDocument {
  refuseUnsafe(fileName, bytes);
  try {
    return XmlDocument.fromBuffer(bytes, { option: SAFE_PARSE_OPTIONS });
  } catch (err) {
    if (!(err instanceof XmlLibError)) throw err;
    const errors = err.details
      .slice(0, LODGING_LIMITS.maxListedErrors)
      .map((d) => ({ field: 'document', message: `line ${d.line}: ${d.message.trim()}` }));
    throw new HttpProblem(
      422,
      'ATTACHMENT_MALFORMED_XML',
      `${fileName} is not well-formed XML: ${errors[0]?.message ?? err.message.trim()}`,
      { errors },
    );
  }
}

/**
 * Checks an XML attachment: refusals, well-formedness and, for a well-known name, its XSD.
 * Throws an HttpProblem (422) naming line and element of each error.
 * @example checkXmlAttachment('CleanOrderCounterparties.xml', bytes, true);
 */
export function checkXmlAttachment(fileName: string, bytes: Buffer, wellKnown: boolean): void {
  const doc = parseXmlSafely(fileName, bytes);
  try {
    if (!wellKnown) return;
    const all = schemaErrors(fileName, doc).map(({ field, message }) => ({ field, message }));
    if (all.length === 0) return;
    const errors = all.slice(0, LODGING_LIMITS.maxListedErrors);
    const more = all.length > errors.length ? ` (${all.length - errors.length} more not listed)` : '';
    throw new HttpProblem(
      422,
      'ATTACHMENT_SCHEMA_VIOLATION',
      `${fileName} does not comply with the schema ${fileName.replace(/\.xml$/, '.xsd')}: ${all.length} error${all.length === 1 ? '' : 's'}, the first: ${errors[0]?.field}: ${errors[0]?.message}${more}`,
      { errors },
    );
  } finally {
    doc.dispose();
  }
}
