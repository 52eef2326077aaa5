/**
 * The application mapping: the sample export's rows become CleanOrder attachments that the
 * service's XSDs accept, and the planted XSD violation is refused with file:line, element and reason.
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadApplicationsPipeline } from '../../../src/pipeline/applications/definition.js';
import { compileApplicationMapping } from '../../../src/pipeline/applications/build-xml.js';
import { listSourceFiles, readSourceFile, isSourceRowError } from '../../../src/pipeline/source/index.js';
import { checkXmlAttachment } from '../../../src/service/lodging/xml-validation.js';
import type { SourceRow } from '../../../src/pipeline/types.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');

async function sampleRows() {
  const def = await loadApplicationsPipeline(join(ROOT, 'pipelines/applications.yaml'));
  const source = def.sources[0]!;
  const [file] = await listSourceFiles(def.dir, source);
  const rows: SourceRow[] = [];
  for await (const r of readSourceFile(source, file!)) if (!isSourceRowError(r)) rows.push(r);
  return { def, source, rows };
}

describe('application mapping → CleanOrder XML', () => {
  it('builds both required attachments that the service itself accepts', async () => {
    const { def, source, rows } = await sampleRows();
    const b = compileApplicationMapping(source.mappingFile.spec, source.mappingFile.display, def.target.referenceNamespace);
    const built = b.build(rows[0]!);
    expect(built.kind).toBe('built');
    if (built.kind !== 'built') return;
    expect(built.attachments.map((a) => a.fileName)).toEqual(['CleanOrderFinancingRequest.xml', 'CleanOrderCounterparties.xml']);
    for (const a of built.attachments) expect(() => checkXmlAttachment(a.fileName, a.bytes, true)).not.toThrow();
    const text = built.attachments[0]!.bytes.toString();
    expect(text).toContain('<CleanOrderFinancingRequest xmlns="urn:stagecoach:lodging:2022.1" version="2022.1">');
    expect(text).toContain(`<OrderReference>${rows[0]!.values.aanvraagnummer}</OrderReference>`);
  });

  it('gives the same message id on every run, and another for another application', async () => {
    const { def, source, rows } = await sampleRows();
    const ids = [0, 0, 2].map((i) => {
      const b = compileApplicationMapping(source.mappingFile.spec, source.mappingFile.display, def.target.referenceNamespace);
      const r = b.build(rows[i]!);
      return r.kind === 'built' ? r.messageId : undefined;
    });
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[1]).toBe(ids[0]);
    expect(ids[2]).not.toBe(ids[0]);
  });

  it('refuses the planted XSD violation with file:line, the element and the schema reason', async () => {
    const { def, source, rows } = await sampleRows();
    const b = compileApplicationMapping(source.mappingFile.spec, source.mappingFile.display, def.target.referenceNamespace);
    const bad = rows[1]!;
    const r = b.build(bad);
    expect(r.kind).toBe('refused');
    if (r.kind !== 'refused') return;
    expect(r.reasons).toHaveLength(1);
    expect(r.reasons[0]).toMatchObject({ code: 'APPLICATION_SCHEMA_VIOLATION', field: 'CleanOrderCounterparties.xml/Initials' });
    expect(r.reasons[0]!.message).toMatch(
      new RegExp(
        `^samples/applications/aanvragen\\.json:${bad.provenance.line}: CleanOrderCounterparties\\.xml does not comply with CleanOrderCounterparties\\.xsd: Initials: line \\d+: Element 'Initials': \\[facet 'pattern'\\] The value 'jm'`,
      ),
    );
  });
});
