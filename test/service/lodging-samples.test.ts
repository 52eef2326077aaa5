import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WELL_KNOWN_ATTACHMENTS } from '../../src/contract/process.js';
import { HttpProblem } from '../../src/service/http/problem.js';
import { checkXmlAttachment } from '../../src/service/lodging/xml-validation.js';
import { checkContentType } from '../../src/service/lodging/content-sniff.js';
import { readApplication } from '../../src/service/lodging/read-application.js';

const SAMPLES = join(import.meta.dirname, '../../samples/lodging');
const sample = (name: string) => readFileSync(join(SAMPLES, name));

function problemOf(fn: () => void): HttpProblem {
  try {
    fn();
  } catch (err) {
    if (err instanceof HttpProblem) return err;
    throw err;
  }
  throw new Error('expected a problem');
}

describe('lodging samples', () => {
  it('hold one file under each well-known name and a supporting PDF, nothing else', () => {
    expect(readdirSync(SAMPLES).sort()).toEqual([...WELL_KNOWN_ATTACHMENTS, 'EmployerStatement.pdf'].sort());
  });

  it.each(WELL_KNOWN_ATTACHMENTS)('%s is valid against its XSD', (name) => {
    expect(() => checkXmlAttachment(name, sample(name), true)).not.toThrow();
  });

  it('EmployerStatement.pdf is a PDF with a cross-reference table and an end marker', () => {
    const pdf = sample('EmployerStatement.pdf');
    expect(checkContentType('EmployerStatement.pdf', 'application/pdf', pdf)).toBe('application/pdf');
    const text = pdf.toString('latin1');
    const startxref = Number(/startxref\n(\d+)\n%%EOF\n$/.exec(text)?.[1]);
    expect(text.slice(startxref, startxref + 4)).toBe('xref');
    // Every object offset in the table points at "<n> 0 obj".
    const offsets = [...text.slice(startxref).matchAll(/^(\d{10}) 00000 n $/gm)].map((m) => Number(m[1]));
    expect(offsets.map((o, i) => text.slice(o, o + `${i + 1} 0 obj`.length))).toEqual(offsets.map((_, i) => `${i + 1} 0 obj`));
  });

  it('read together, they cross-check and yield the three counterparties', () => {
    const files = new Map(WELL_KNOWN_ATTACHMENTS.map((n) => [n, sample(n)] as const));
    const reading = readApplication({
      brokerKey: 'demo-broker',
      processId: '11111111-2222-4333-8444-555555555555',
      files,
      attachmentNames: [...WELL_KNOWN_ATTACHMENTS, 'EmployerStatement.pdf'],
    });
    expect(reading.errors).toEqual([]);
    expect(
      reading.counterparties.map((c) => (c.type === 'person' ? `${c.initials} ${c.surnamePrefix ?? ''} ${c.surname}` : c.organisationName)),
    ).toEqual(['J.M. van der Berg', 'S.  Bakker', 'Van der Berg Advies B.V.']);
  });

  it('refuses a sample under another well-known name as a schema violation of the root element', () => {
    const problem = problemOf(() => checkXmlAttachment('CleanOrderCovers.xml', sample('CleanOrderCollaterals.xml'), true));
    expect(problem.status).toBe(422);
    expect(problem.code).toBe('ATTACHMENT_SCHEMA_VIOLATION');
    expect(problem.extra.errors).toEqual([
      {
        field: 'CleanOrderCollaterals',
        message: "line 2: Element 'CleanOrderCollaterals': No matching global declaration available for the validation root.",
      },
    ]);
  });
});
