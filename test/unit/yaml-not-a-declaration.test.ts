/**
 * A pipeline or mapping path that names some other file (issue 41): `mapping: /etc/passwd`
 * printed the file's first line in the error. Now any document that is not a mapping of keys —
 * a line of text, several, a list, a number — is refused with its kind, never its content.
 */
import { describe, expect, it } from 'vitest';
import { mappingFileSchema } from '../../src/pipeline/mapping/schema.js';
import { parseYamlText } from '../../src/pipeline/definition/yaml-file.js';

const SECRET = 'root:x:0:0:root:/root:/bin/bash';

describe('a declaration file that is no declaration', () => {
  it.each([
    [`${SECRET}\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n`, 'a line of text'],
    ['PRETTY_NAME="Debian GNU/Linux 12"\nNAME="Debian"\n', 'a line of text'],
    ['vm\n', 'a line of text'],
    [`- ${SECRET}\n- two\n`, 'a list'],
    ['424242\n', 'a number'],
  ])('refuses %j naming its kind, not its content', (text, kind) => {
    let message = '';
    try {
      parseYamlText(text, mappingFileSchema, '/etc/passwd');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe(`Invalid /etc/passwd: /etc/passwd:1:1: expected a YAML mapping of keys, got ${kind}; is this the right file?`);
    for (const word of text.split(/[\s:="]+/).filter((w) => w.length > 2)) expect(message).not.toContain(word);
  });
});
