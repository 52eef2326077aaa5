/**
 * A YAML alias bomb in a pipeline or mapping file (issue 41): refused as a configuration error
 * (CONFIG_INVALID, exit 2) naming the file, the line of its first alias and the limit, instead
 * of the yaml library's bare message (exit 1). The limit is STAGECOACH_YAML_MAX_ALIASES.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseYamlText } from '../../src/pipeline/definition/yaml-file.js';
import { pipelineFileSchema } from '../../src/pipeline/definition/schema.js';
import { mappingFileSchema } from '../../src/pipeline/mapping/schema.js';
import { readLimits } from '../../src/pipeline/read-limits.js';
import { exitCodeFor } from '../../src/cli/run.js';

const levels = 'abcdefg'.split('');
const BOMB = [
  'a0: &a0 ["x","x","x","x","x","x","x","x","x"]',
  ...levels.map(
    (l, i) =>
      `${l}: &${l} [${Array(9)
        .fill(`*${i === 0 ? 'a0' : levels[i - 1]}`)
        .join(',')}]`,
  ),
  'name: [*g,*g]',
].join('\n');

afterEach(() => {
  delete process.env.STAGECOACH_YAML_MAX_ALIASES;
});

function refusal(schema: typeof pipelineFileSchema | typeof mappingFileSchema, text: string, file: string) {
  try {
    parseYamlText(text, schema, file);
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('not refused');
}

describe('YAML alias limit', () => {
  it.each([
    ['a pipeline', pipelineFileSchema, 'p.yaml'],
    ['a mapping', mappingFileSchema, 'm.yaml'],
  ] as const)('refuses an alias bomb in %s with the file, line and limit named, exit 2', (_, schema, file) => {
    const err = refusal(schema, BOMB, file);
    expect(err.code).toBe('CONFIG_INVALID');
    expect(exitCodeFor(err)).toBe(2);
    expect(err.message).toBe(
      `Invalid ${file}: ${file}:2:8: the document's aliases expand past the limit of 100 (STAGECOACH_YAML_MAX_ALIASES): an alias bomb, or a file that needs a higher limit; expected at most 100 aliases resolved`,
    );
  });

  it('follows STAGECOACH_YAML_MAX_ALIASES, and refuses a value that is no count', () => {
    process.env.STAGECOACH_YAML_MAX_ALIASES = '3';
    const few = 'a: &a 1\nname: [*a, *a, *a, *a, *a]\n';
    expect(refusal(pipelineFileSchema, few, 'p.yaml').message).toMatch(/past the limit of 3 /);
    process.env.STAGECOACH_YAML_MAX_ALIASES = 'many';
    expect(() => readLimits()).toThrow(/STAGECOACH_YAML_MAX_ALIASES="many"/);
  });
});
