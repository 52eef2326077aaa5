import { describe, expect, it } from 'vitest';
import { createFrameDecoder, encodeFrame, type Frame } from '../../src/codec/frames.js';
import { decodeFrames } from '../../src/codec/frame-stream.js';

function decode(format: 'jsonl' | 'json-seq', chunks: Array<string | Buffer>, maxRecordBytes?: number): Frame[] {
  const frames: Frame[] = [];
  const d = createFrameDecoder(format, (f) => frames.push(f), { maxRecordBytes });
  for (const c of chunks) d.write(typeof c === 'string' ? Buffer.from(c) : c);
  d.end();
  return frames;
}
const values = (frames: Frame[]) => frames.map((f) => (f.kind === 'record' ? f.value : `${f.kind}:${f.reason}`));

describe('json-seq decoding (RFC 7464)', () => {
  it('reads records split across chunks at any byte', () => {
    const text = encodeFrame('json-seq', { a: 1, s: 'héllo' }) + encodeFrame('json-seq', { b: [1, 2] });
    const bytes = Buffer.from(text);
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(values(decode('json-seq', [bytes.subarray(0, cut), bytes.subarray(cut)]))).toEqual([{ a: 1, s: 'héllo' }, { b: [1, 2] }]);
    }
  });

  it('reports a malformed record and goes on with the next one', () => {
    const frames = decode('json-seq', ['\x1e{"a":1}\n\x1e{"a":,}\n\x1e{"a":3}\n']);
    expect(values(frames)).toEqual([{ a: 1 }, 'invalid:malformed', { a: 3 }]);
    expect(frames[1]).toMatchObject({ index: 1, text: '{"a":,}\n' });
  });

  it('reports a record cut short by the next RS, and one cut short at the end', () => {
    expect(values(decode('json-seq', ['\x1e{"a":1\x1e{"a":2}\n\x1e{"a":']))).toEqual(['invalid:truncated', { a: 2 }, 'invalid:truncated']);
  });

  it('accepts a final complete object without its LF, as RFC 7464 allows', () => {
    expect(values(decode('json-seq', ['\x1e{"a":1}']))).toEqual([{ a: 1 }]);
  });

  it('keeps an RS-free string with a newline inside a record intact', () => {
    expect(values(decode('json-seq', ['\x1e{"a":"x\\ny"}\n']))).toEqual([{ a: 'x\ny' }]);
  });

  it('refuses text before the first RS without losing the records after it', () => {
    expect(values(decode('json-seq', ['junk\n\x1e{"a":1}\n']))).toEqual(['invalid:malformed', { a: 1 }]);
  });

  it('refuses a record above the byte limit also when it arrives in one chunk', () => {
    const big = `\x1e{"x":"${'y'.repeat(100)}"}\n\x1e{"ok":true}\n`;
    expect(values(decode('json-seq', [big], 50))).toEqual(['invalid:too-large', { ok: true }]);
    expect(values(decode('jsonl', [`{"x":"${'y'.repeat(100)}"}\n{"ok":true}\n`], 50))).toEqual(['invalid:too-large', { ok: true }]);
  });

  it('turns a record above the byte limit into one too-large frame and resumes after it', () => {
    const big = `\x1e{"x":"${'y'.repeat(100)}"}\n`;
    expect(values(decode('json-seq', [big.slice(0, 40), big.slice(40), '\x1e{"ok":true}\n'], 50))).toEqual([
      'invalid:too-large',
      { ok: true },
    ]);
  });

  it('keeps the first bytes of a too-large record skipped across chunks, so its referenceId can be named', () => {
    const big = `\x1e{"referenceId":"r-1","x":"${'y'.repeat(100)}"}\n`;
    const frames: Frame[] = [];
    const d = createFrameDecoder('json-seq', (f) => frames.push(f), { maxRecordBytes: 50 });
    for (const part of [big.slice(0, 30), big.slice(30, 60), big.slice(60)]) d.write(Buffer.from(part));
    d.end();
    expect(frames).toEqual([
      {
        kind: 'invalid',
        reason: 'too-large',
        index: 0,
        offset: 1,
        bytes: big.length - 1,
        text: big.slice(1, 60),
        message: 'record larger than 50 bytes',
      },
    ]);
  });
});

describe('JSON Lines decoding', () => {
  it('reads lines, skips blank ones and tolerates CRLF', () => {
    expect(values(decode('jsonl', ['{"a":1}\r\n\n{"a"', ':2}\n']))).toEqual([{ a: 1 }, { a: 2 }]);
  });
  it('accepts a complete last line without newline and flags an incomplete one', () => {
    expect(values(decode('jsonl', ['{"a":1}\n{"a":2}']))).toEqual([{ a: 1 }, { a: 2 }]);
    expect(values(decode('jsonl', ['{"a":1}\n{"a":']))).toEqual([{ a: 1 }, 'invalid:truncated']);
  });
  it('numbers frames in order, invalid ones included, with byte offsets', () => {
    const frames = decode('jsonl', ['{"a":1}\nnope\n{"a":3}\n']);
    expect(frames.map((f) => [f.index, f.offset])).toEqual([
      [0, 0],
      [1, 8],
      [2, 13],
    ]);
  });
});

describe('decodeFrames over an async source', () => {
  it('yields the frames of a chunked source in order', async () => {
    async function* source() {
      yield '\x1e{"n":1}\n\x1e{"n"';
      yield ':2}\n';
    }
    const out: unknown[] = [];
    for await (const f of decodeFrames(source(), 'json-seq')) out.push(f.kind === 'record' ? f.value : f.reason);
    expect(out).toEqual([{ n: 1 }, { n: 2 }]);
  });
});
