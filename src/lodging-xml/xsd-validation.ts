/**
 * The lodging XSDs and their validation with libxml2 (WebAssembly), shared by the embedded
 * service (which refuses an attachment that fails) and the client (which checks an application's
 * XML before anything is sent). Pure: no HTTP, no service or client imports. Each XSD is compiled
 * once per process, on first use; documents are disposed by whoever parses them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ParseOption, XmlDocument, XmlLibError, XsdValidator } from 'libxml2-wasm';
import { WELL_KNOWN_ATTACHMENTS } from '../contract/process.js';

/** The namespace of every well-known lodging document. */
export const LODGING_NAMESPACE = 'urn:stagecoach:lodging:2022.1';

/** Parser options: no network, no external entities or DTDs; entity substitution (NOENT) stays off. */
export const SAFE_PARSE_OPTIONS = ParseOption.XML_PARSE_NONET | ParseOption.XML_PARSE_NO_XXE | ParseOption.XML_PARSE_NO_SYS_CATALOG;

/** One schema error: the element (or element/@attribute), the document's line, libxml2's reason. */
export interface XsdError {
  field: string;
  line: number;
  /** `line N: Element 'X': …` with the namespace braces dropped. */
  message: string;
}

/**
 * The folder holding the XSDs (they stay with the service that publishes them): found from
 * source, or from the compiled `dist/` (tsc does not copy .xsd files).
 */
export function schemaDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    join(here, '..', 'service', 'lodging', 'schemas'),
    join(here, '..', '..', '..', 'src', 'service', 'lodging', 'schemas'),
  ];
  const found = candidates.find((dir) => existsSync(join(dir, `${WELL_KNOWN_ATTACHMENTS[0].replace(/\.xml$/, '')}.xsd`)));
  if (!found) throw new Error(`lodging XSDs not found; looked in ${candidates.join(', ')}`);
  return found;
}

const validators = new Map<string, XsdValidator>();
function validatorFor(fileName: string): XsdValidator {
  let validator = validators.get(fileName);
  if (!validator) {
    const path = join(schemaDir(), fileName.replace(/\.xml$/, '.xsd'));
    const xsd = XmlDocument.fromBuffer(readFileSync(path), { url: path, option: SAFE_PARSE_OPTIONS });
    try {
      validator = XsdValidator.fromDoc(xsd);
    } finally {
      xsd.dispose();
    }
    validators.set(fileName, validator);
  }
  return validator;
}

/**
 * Validates a parsed document against the XSD of its well-known file name: every error, in
 * document order (empty when it complies).
 * @example schemaErrors('CleanOrderCounterparties.xml', doc) // [{ field: 'Initials', line: 5, message: "line 5: Element 'Initials': …" }]
 */
export function schemaErrors(fileName: string, doc: XmlDocument): XsdError[] {
  try {
    validatorFor(fileName).validate(doc);
    return [];
  } catch (err) {
    if (!(err instanceof XmlLibError)) throw err;
    return err.details.map(toXsdError);
  }
}

/**
 * Parses (safely) and validates a document the caller built itself, so no DTD scan is needed:
 * a malformed document is one error on field `document`.
 */
export function validateLodgingXml(fileName: string, bytes: Buffer): XsdError[] {
  let doc: XmlDocument;
  try {
    doc = XmlDocument.fromBuffer(bytes, { option: SAFE_PARSE_OPTIONS });
  } catch (err) {
    if (!(err instanceof XmlLibError)) throw err;
    return err.details.map((d) => ({ field: 'document', line: d.line, message: `line ${d.line}: ${d.message.trim()}` }));
  }
  try {
    return schemaErrors(fileName, doc);
  } finally {
    doc.dispose();
  }
}

function toXsdError(detail: { message: string; line: number }): XsdError {
  const message = detail.message.trim().replaceAll(`{${LODGING_NAMESPACE}}`, '');
  const element = /^Element '([^']+)'(?:, attribute '([^']+)')?/.exec(message);
  const field = element ? (element[2] ? `${element[1]}/@${element[2]}` : element[1]!) : 'document';
  return { field, line: detail.line, message: `line ${detail.line}: ${message}` };
}
