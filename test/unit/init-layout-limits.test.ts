/**
 * `init --layout` with a field past the layout limit (issue 41): `PIC X(999999999999999)` used to
 * expand the picture into a string ("Invalid string length"); now every such picture — any
 * symbol, signed, with decimals, or a name,start,length row — is refused at its line with the
 * limit (STAGECOACH_LAYOUT_MAX_FIELD) named, and pictures within it still lay out.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseLayout } from '../../src/init/layout.js';

afterEach(() => {
  delete process.env.STAGECOACH_LAYOUT_MAX_FIELD;
});

const copybook = (pic: string) => `       01 KLANT.\n           05 NR PIC 9(6).\n           05 NAAM PIC ${pic}.\n`;

describe('record layout limits', () => {
  it.each(['X(999999999999999)', 'A(70000)', '9(99999999)', 'S9(9999999999)V99', 'X(65536)X', `X(${'9'.repeat(40)})`])(
    'refuses PIC %s at its copybook line, naming the limit',
    (pic) => {
      expect(() => parseLayout(copybook(pic), 'k.cpy')).toThrow(
        `k.cpy:3: PIC ${pic} spans more than 65536 characters (the limit STAGECOACH_LAYOUT_MAX_FIELD), expected a field of at most 65536`,
      );
    },
  );

  it('lays out pictures within the limit as before, and follows STAGECOACH_LAYOUT_MAX_FIELD', () => {
    const layout = parseLayout(copybook('S9(5)V99'), 'k.cpy');
    expect(layout.columns).toEqual([
      { name: 'NR', start: 1, length: 6 },
      { name: 'NAAM', start: 7, length: 7 },
    ]);
    expect(layout.decimals).toEqual({ NAAM: 2 });
    expect(parseLayout(copybook('X(65536)'), 'k.cpy').length).toBe(65542);
    process.env.STAGECOACH_LAYOUT_MAX_FIELD = '10';
    expect(() => parseLayout(copybook('X(11)'), 'k.cpy')).toThrow(/k\.cpy:3: PIC X\(11\) spans more than 10 characters/);
  });

  it('refuses a name,start,length row past the limit at its line', () => {
    expect(() => parseLayout('naam,start,lengte\nnr,1,6\nnaam,7,999999999999999\n', 'l.csv')).toThrow(
      'l.csv:3: naam: 999999999999999 characters is more than the limit of 65536 (STAGECOACH_LAYOUT_MAX_FIELD), expected a field of at most 65536',
    );
  });
});
