/**
 * Line numbers from the bytes of a CSV file, two ways that do not depend on the parser:
 * - `LineIndex` maps a byte offset to its line for the rows the reader yields (csv-parse's own
 *   `info.lines` counts a CRLF inside a quoted field, or a CRLF line in a file of LF lines, twice);
 * - `PhysicalLines` counts the file's lines and blank lines for the tally (tally.ts), the count a
 *   reader's rows are held to.
 * Both take a line break to be LF, CRLF (once) or a lone CR; UTF-16 input comes as UTF-16LE, where
 * breaks are code units at even offsets.
 */

const LF = 10;
const CR = 13;
const SPACE = 32;
const TAB = 9;

/**
 * Where the line breaks are in a stretch of input given in order, so that the line of any later
 * byte is known. Asked in order too, so it forgets the breaks behind.
 */
export class LineIndex {
  private ends: number[] = []; // file offsets just past each break not yet passed
  private head = 0;
  private passed: number; // line of the first byte at `head`
  private pendingCr = -1; // offset of a CR that ended the last bytes (a break unless an LF follows)
  private oddByte = -1; // UTF-16: the first byte of a code unit the last bytes cut in two

  /**
   * @param line the line of the first byte that will be added
   * @param wide UTF-16LE: line breaks are code units, at even offsets from the first byte
   */
  constructor(
    line: number,
    private readonly wide = false,
  ) {
    this.passed = line;
  }

  add(bytes: Buffer, at: number): void {
    if (this.wide) {
      this.addWide(bytes, at);
      return;
    }
    if (this.pendingCr >= 0 && bytes[0] !== LF) this.ends.push(this.pendingCr + 1);
    this.pendingCr = -1;
    let lf = bytes.indexOf(LF);
    let cr = bytes.indexOf(CR);
    while (lf >= 0 || cr >= 0) {
      if (cr >= 0 && (lf < 0 || cr < lf)) {
        if (cr === bytes.length - 1) this.pendingCr = at + cr;
        else if (bytes[cr + 1] !== LF) this.ends.push(at + cr + 1);
        cr = bytes.indexOf(CR, cr + 1);
      } else {
        this.ends.push(at + lf + 1);
        lf = bytes.indexOf(LF, lf + 1);
      }
    }
  }

  private addWide(bytes: Buffer, at: number): void {
    let i = 0;
    const unit = (lo: number, hi: number, end: number) => {
      const u = lo | (hi << 8);
      if (this.pendingCr >= 0 && u !== LF) this.ends.push(this.pendingCr + 2);
      this.pendingCr = -1;
      if (u === LF) this.ends.push(end);
      else if (u === CR) this.pendingCr = end - 2;
    };
    if (this.oddByte >= 0 && bytes.length > 0) {
      unit(this.oddByte, bytes[0]!, at + 1);
      this.oddByte = -1;
      i = 1;
    }
    for (; i + 1 < bytes.length; i += 2) unit(bytes[i]!, bytes[i + 1]!, at + i + 2);
    if (i < bytes.length) this.oddByte = bytes[i]!;
  }

  /** The line of the byte at `offset` (never before the last one asked about). */
  at(offset: number): number {
    const ends = this.ends;
    let head = this.head;
    while (head < ends.length && ends[head]! <= offset) head++;
    this.passed += head - this.head;
    this.head = head;
    if (head > 4096) {
      ends.splice(0, head);
      this.head = 0;
    }
    return this.passed;
  }
}

/**
 * Counts physical lines and blank lines (nothing but spaces and tabs) of a byte stream given in
 * order: every line break ends a line, and a last line without one counts when it holds a byte.
 * Deliberately simple: it is what the parser's rows are checked against.
 * @example const p = new PhysicalLines(false); p.add(Buffer.from('a\r\n\nb')); p.end(); // p.lines 3, p.blank 1
 */
export class PhysicalLines {
  lines = 0;
  blank = 0;
  private lineBlank = true; // the line so far holds only blanks
  private lineEmpty = true; // the line so far holds no byte at all
  private pendingCr = false; // the last byte was a CR: a break, unless an LF follows (CRLF)
  private oddByte = -1; // UTF-16: half a code unit carried over

  constructor(private readonly wide: boolean) {}

  add(bytes: Buffer): void {
    if (this.wide) {
      let i = 0;
      if (this.oddByte >= 0 && bytes.length > 0) {
        this.unit(this.oddByte | (bytes[0]! << 8));
        this.oddByte = -1;
        i = 1;
      }
      for (; i + 1 < bytes.length; i += 2) this.unit(bytes[i]! | (bytes[i + 1]! << 8));
      if (i < bytes.length) this.oddByte = bytes[i]!;
      return;
    }
    // Jumps from break to break; only a line's bytes are looked at when it starts with a blank.
    let s = 0;
    const n = bytes.length;
    let nextCr = -1; // the next CR at or after s (n: none), looked for again only once passed
    while (s < n) {
      if (this.pendingCr) {
        this.pendingCr = false;
        if (bytes[s] === LF) {
          s++;
          continue;
        }
      }
      let lf = bytes.indexOf(LF, s);
      if (lf < 0) lf = n;
      if (nextCr < s) {
        nextCr = bytes.indexOf(CR, s);
        if (nextCr < 0) nextCr = n;
      }
      const brk = Math.min(lf, nextCr);
      if (brk > s) {
        this.lineEmpty = false;
        if (this.lineBlank) for (let i = s; i < brk && this.lineBlank; i++) this.lineBlank = bytes[i] === SPACE || bytes[i] === TAB;
      }
      if (brk === n) return;
      this.endLine();
      this.pendingCr = bytes[brk] === CR;
      s = brk + 1;
    }
  }

  private unit(u: number): void {
    if (this.pendingCr) {
      this.pendingCr = false;
      if (u === LF) return;
    }
    if (u === LF || u === CR) {
      this.endLine();
      this.pendingCr = u === CR;
      return;
    }
    this.lineEmpty = false;
    if (u !== SPACE && u !== TAB) this.lineBlank = false;
  }

  private endLine(): void {
    this.lines++;
    if (this.lineBlank) this.blank++;
    this.lineBlank = true;
    this.lineEmpty = true;
  }

  /** The input ended: a last line without a break counts when it holds anything. */
  end(): void {
    if (!this.lineEmpty) this.endLine();
  }
}
