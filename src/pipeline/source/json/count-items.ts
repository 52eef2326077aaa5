/**
 * The independent count of a JSON array: a byte scanner, written apart from stream-json on
 * purpose, that follows strings, escapes and nesting and counts the complete items of the array
 * the source reads (the top-level array, or the one at `json.path`). It also knows where the text
 * stopped: inside a string, inside an item, or inside the array after its last complete item.
 * That is how a cut-off export is told from a short one.
 */

const STRING_STOP = /["\\\r\n]/g;

interface Frame {
  array: boolean;
  /** Object: the last key seen (raw text between the quotes); arrays: null. */
  key: string | null;
  /** Object: the next string is a key. */
  expectKey: boolean;
  target: boolean;
}

/** Where the text ended, when it ended before the document did. */
export interface JsonCut {
  /** Complete items of the target array before the cut. */
  items: number;
  /** Line where the cut item starts; undefined when the cut falls between items (or outside the array). */
  itemLine?: number;
  /** Whether the target array had opened at all. */
  inArray: boolean;
  /** Line of the text's end. */
  line: number;
}

/**
 * Counts the items of one JSON array in text fed in any pieces.
 * @example const c = new JsonItemCounter(['export', 'bedrijven']); c.push('{"export":{"bedrijven":[{},{'); c.end() // { items: 1, itemLine: 1, inArray: true, line: 1 }
 */
export class JsonItemCounter {
  /** Complete items of the target array. */
  items = 0;
  private readonly frames: Frame[] = [];
  private targetSeen = false;
  private inString = false;
  private escape = false;
  private stringIsKey = false;
  private key = '';
  private inItem = false;
  private itemLine = 0;
  private line = 1;
  private afterCr = false;
  /** Whether anything but blanks arrived. */
  sawContent = false;

  constructor(private readonly target: readonly string[]) {}

  private atTargetLevel(): boolean {
    const top = this.frames[this.frames.length - 1];
    return top?.target === true;
  }

  private startValue(): void {
    if (this.atTargetLevel() && !this.inItem) {
      this.inItem = true;
      this.itemLine = this.line;
    }
  }

  push(text: string): void {
    for (let i = 0; i < text.length; i++) {
      if (this.inString && !this.escape) {
        // Inside a string only a quote, a backslash or a line break matters: jump to the next one.
        STRING_STOP.lastIndex = i;
        const stop = STRING_STOP.exec(text);
        const at = stop ? stop.index : text.length;
        if (at > i) {
          this.afterCr = false;
          if (this.stringIsKey) this.key += text.slice(i, at);
        }
        if (!stop) break;
        i = at;
      }
      const c = text.charCodeAt(i);
      if (c === 10 || c === 13) {
        if (!(c === 10 && this.afterCr)) this.line++;
        this.afterCr = c === 13;
      } else this.afterCr = false;
      if (this.inString) {
        if (this.escape) this.escape = false;
        else if (c === 92 /* \ */) this.escape = true;
        else if (c === 34 /* " */) {
          this.inString = false;
          if (this.stringIsKey) this.frames[this.frames.length - 1]!.key = this.key;
        } else if (this.stringIsKey) this.key += text[i]; // a line break inside a key (invalid JSON; the parser names it)
        continue;
      }
      switch (c) {
        case 34: {
          this.sawContent = true;
          const top = this.frames[this.frames.length - 1];
          this.stringIsKey = top !== undefined && !top.array && top.expectKey;
          if (this.stringIsKey) {
            this.key = '';
            top!.expectKey = false;
          } else this.startValue();
          this.inString = true;
          break;
        }
        case 123: // {
          this.sawContent = true;
          this.startValue();
          this.frames.push({ array: false, key: null, expectKey: true, target: false });
          break;
        case 91: {
          // [
          this.sawContent = true;
          this.startValue();
          const isTarget = !this.targetSeen && this.pathMatches();
          if (isTarget) this.targetSeen = true;
          this.frames.push({ array: true, key: null, expectKey: false, target: isTarget });
          break;
        }
        case 125: // }
        case 93: {
          // ]
          const closed = this.frames.pop();
          // An item is complete when its last character arrives: the brace or bracket that closes
          // an object or array item, or (a scalar) the comma or bracket after it.
          if ((closed?.target || this.atTargetLevel()) && this.inItem) {
            this.items++;
            this.inItem = false;
          }
          break;
        }
        case 44: {
          // ,
          const top = this.frames[this.frames.length - 1];
          if (top?.target && this.inItem) {
            this.items++;
            this.inItem = false;
          } else if (top && !top.array) top.expectKey = true;
          break;
        }
        case 32:
        case 9:
        case 10:
        case 13:
        case 58: // :
          break;
        default:
          this.sawContent = true;
          this.startValue(); // a number, true, false, null (or garbage the parser will name)
      }
    }
  }

  private pathMatches(): boolean {
    if (this.frames.length !== this.target.length) return false;
    for (let i = 0; i < this.target.length; i++) {
      const f = this.frames[i]!;
      if (f.array || f.key !== this.target[i]) return false;
    }
    return true;
  }

  /** Undefined when the document closed; otherwise where the text stopped. */
  end(): JsonCut | undefined {
    if (!this.inString && this.frames.length === 0) return undefined;
    const inArray = this.frames.some((f) => f.target);
    return { items: this.items, ...(inArray && this.inItem ? { itemLine: this.itemLine } : {}), inArray, line: this.line };
  }
}
