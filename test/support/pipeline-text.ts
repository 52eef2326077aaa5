/**
 * Test support: the text of a small pipeline file with one source named `people`, read in the
 * given format with the format's option lines, mapped by `mapping.yaml` next to it.
 */
export function onePeopleSourcePipeline(o: { name: string; format: string; path: string; options: readonly string[] }): string {
  return [
    'language: 2',
    `name: ${o.name}`,
    'sources:',
    '  - name: people',
    `    format: ${o.format}`,
    `    path: ${o.path}`,
    ...o.options.map((l) => `    ${l}`),
    '    mapping: mapping.yaml',
    'target: { referenceNamespace: 3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f }',
    '',
  ].join('\n');
}
