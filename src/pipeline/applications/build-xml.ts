/**
 * One legacy row → the attachments of one CleanOrder message: the application mapping's
 * expressions (compiled once, src/pipeline/mapping/compile.ts) fill each attachment's root
 * element, xmlbuilder2 writes the XML (escaping and namespace by the library, never by string
 * concatenation), and the service's XSDs (src/lodging-xml/) check it before anything is sent.
 * A row that fails is refused with its file:line, the element and the schema's reason.
 */
import { create } from 'xmlbuilder2';
import { LODGING_NAMESPACE, validateLodgingXml } from '../../lodging-xml/xsd-validation.js';
import { compileFields, type MapContext } from '../mapping/compile.js';
import { ReferenceIds } from '../mapping/reference-ids.js';
import type { RejectReason, SourceRow } from '../types.js';
import { APPLICATION_ATTACHMENTS, type ApplicationAttachment, type ApplicationMapping } from './definition.js';

/** The version every lodging document carries on its root element. */
const LODGING_VERSION = '2022.1';

export interface BuiltAttachment {
  fileName: ApplicationAttachment;
  bytes: Buffer;
}

export type BuiltApplication =
  | { kind: 'built'; key: string; messageId: string; attachments: BuiltAttachment[] }
  | { kind: 'refused'; key: string | undefined; reasons: RejectReason[] };

export interface ApplicationBuilder {
  scope: string;
  origin: string;
  build(row: SourceRow): BuiltApplication;
}

/**
 * Compiles an application mapping. `namespace` is the pipeline's target.referenceNamespace: the
 * message id is uuidv5("application:<scope>:<key>"), so a re-run finds the same message.
 * @example const b = compileApplicationMapping(spec, 'mappings/applications/crm.yaml', ns);
 *          b.build(row) // { kind: 'built', key: 'A-1', messageId: '…', attachments: [...] }
 */
export function compileApplicationMapping(spec: ApplicationMapping, file: string, namespace: string): ApplicationBuilder {
  const ids = new ReferenceIds(namespace);
  const scope = spec.key.scope;
  const keyField = compileFields(
    { key: { column: spec.key.column, transforms: spec.key.transforms, required: false } },
    spec.codes,
    scope,
    file,
    ids,
  );
  const parts = APPLICATION_ATTACHMENTS.map((fileName) => ({
    fileName,
    fields: compileFields(spec.attachments[fileName], spec.codes, scope, file, ids),
  }));
  return {
    scope,
    origin: spec.externalReference.origin,
    build(row) {
      const at = `${row.provenance.file}:${row.provenance.line}`;
      const ctx: MapContext = { reasons: null, refs: [], key: '' };
      const rawKey = keyField.fill(row.values, ctx).key;
      const key = rawKey === undefined || rawKey === null || String(rawKey).trim() === '' ? undefined : String(rawKey).trim();
      if (!key) return { kind: 'refused', key, reasons: ctx.reasons ?? [missingKey(at, spec.key.column)] };
      ctx.key = key;
      const contents = parts.map((p) => ({ fileName: p.fileName, content: p.fields.fill(row.values, ctx) }));
      if (ctx.reasons) return { kind: 'refused', key, reasons: ctx.reasons.map((r) => ({ ...r, message: `${at}: ${r.message}` })) };
      const reasons: RejectReason[] = [];
      const attachments: BuiltAttachment[] = [];
      for (const { fileName, content } of contents) {
        const bytes = toXml(fileName, content);
        for (const e of validateLodgingXml(fileName, bytes)) {
          reasons.push({
            field: `${fileName}/${e.field}`,
            code: 'APPLICATION_SCHEMA_VIOLATION',
            message: `${at}: ${fileName} does not comply with ${fileName.replace(/\.xml$/, '.xsd')}: ${e.field}: ${e.message}`,
          });
        }
        attachments.push({ fileName, bytes });
      }
      if (reasons.length) return { kind: 'refused', key, reasons };
      return { kind: 'built', key, messageId: ids.of('application', `${scope}:${key}`), attachments };
    },
  };
}

function missingKey(at: string, column: string): RejectReason {
  return { field: 'key', code: 'MISSING_REQUIRED_FIELD', message: `${at}: the application's key column ${column} is empty` };
}

/** The document: root element named after the file, in the lodging namespace, with the mapped content. */
function toXml(fileName: ApplicationAttachment, content: Record<string, unknown>): Buffer {
  const root = create({ version: '1.0', encoding: 'UTF-8' }).ele(LODGING_NAMESPACE, fileName.replace(/\.xml$/, ''), {
    version: LODGING_VERSION,
  });
  if (Object.keys(content).length > 0) root.ele(content);
  return Buffer.from(root.doc().end({ prettyPrint: true }), 'utf8');
}
