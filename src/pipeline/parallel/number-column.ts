/**
 * Numbers appended into a typed array that doubles as it fills. Its elements live outside the
 * JS heap, so a range's thousands of line numbers and offsets are nothing a scavenge copies (a
 * growing JS array of them is, again at every scavenge until it is packed). `build` hands back
 * an array of exactly the numbers pushed, with its own buffer, ready to be transferred.
 * @example const b = new NumberColumnBuilder(Uint32Array); b.push(7); b.build() // Uint32Array [7]
 */
export class NumberColumnBuilder<A extends Uint8Array | Uint16Array | Uint32Array | Float64Array> {
  private array: A;
  private n = 0;

  constructor(private readonly Kind: { new (length: number): A }) {
    this.array = new Kind(1024);
  }

  get length(): number {
    return this.n;
  }

  push(value: number): void {
    if (this.n === this.array.length) {
      const bigger = new this.Kind(this.n * 2);
      bigger.set(this.array);
      this.array = bigger;
    }
    this.array[this.n++] = value;
  }

  build(): A {
    return this.array.slice(0, this.n) as A;
  }
}

/**
 * Text appended as UTF-8 into one byte array that doubles as it fills: a range's framed records
 * (about 4 MB of them per MiB of CSV) then die as soon as they are written, where a list of them
 * lived, and was copied by every scavenge, until the range was packed.
 * @example const b = new Utf8Builder(); b.write('\x1e{}\n'); b.build() // Uint8Array(4)
 */
export class Utf8Builder {
  private buffer = Buffer.allocUnsafeSlow(64 * 1024);
  private n = 0;

  /** Appends `text`; returns its UTF-8 length. */
  write(text: string): number {
    const bytes = Buffer.byteLength(text);
    if (this.n + bytes > this.buffer.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(this.buffer.length * 2, this.n + bytes));
      this.buffer.copy(bigger, 0, 0, this.n);
      this.buffer = bigger;
    }
    this.n += this.buffer.write(text, this.n);
    return bytes;
  }

  /** The bytes written, in memory of their own (transferable). */
  build(): Uint8Array {
    return new Uint8Array(this.buffer.buffer.slice(this.buffer.byteOffset, this.buffer.byteOffset + this.n));
  }
}
