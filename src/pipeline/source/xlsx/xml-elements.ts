/**
 * The few pieces of XML a workbook's parts need, read from streamed text in bounded memory:
 * the complete elements of one tag (`<row>` of a sheet, `<si>` of the shared strings) one at a
 * time, under a limit on how much text one element (with what precedes it) may take; the text
 * of `<t>` runs; attributes; XML and OOXML escapes. SpreadsheetML is written with or without a
 * namespace prefix (`<x:row>` by some .NET writers): both are read.
 */

/** The error for an element past the limit, or one the text ends inside, given its text so far. */
export type ElementFailure = (why: 'too-long' | 'unclosed', pending: string) => Error;

/** An element begun and not yet ended: its text so far, what ends it once its start tag has ended, the end of what was searched. */
interface Pending {
  parts: string[];
  length: number;
  prefix: string;
  close: string | undefined;
  tail: string;
}

/**
 * Where in `piece` (the next text of a pending element) the element ends (the index just past
 * it), or -1. Only the new text is searched (with the few characters before it that a cut close
 * tag may have begun in), so a long element costs its length once, not once per chunk.
 */
function endIn(p: Pending, tag: string, piece: string): number {
  let probe = p.tail + piece;
  let from = 0;
  if (p.close === undefined) {
    const gt = probe.indexOf('>');
    if (gt < 0) {
      p.tail = probe.slice(-1);
      return -1;
    }
    if (probe[gt - 1] === '/') return gt + 1 - p.tail.length;
    p.close = `</${p.prefix}${tag}>`;
    from = gt + 1;
  }
  const at = probe.indexOf(p.close, from);
  if (at >= 0) return at + p.close.length - p.tail.length;
  probe = probe.slice(Math.max(from, probe.length - p.close.length + 1));
  p.tail = probe;
  return -1;
}

/**
 * The complete elements `<tag …>…</tag>` (or `<tag …/>`) of a streamed XML text, one at a time.
 * Text between elements is dropped as it comes, but counted: when one element, with the text
 * between it and the element before, passes `maxChars`, `fail('too-long', its text so far)` says
 * why and the read stops; a text that ends inside an element is `fail('unclosed', …)`.
 */
export async function* xmlElements(
  chunks: AsyncIterable<string>,
  tag: string,
  maxChars: number,
  fail: ElementFailure,
): AsyncGenerator<string> {
  const open = new RegExp(`<((?:[A-Za-z_][\\w.-]*:)?)${tag}(?=[\\s>/])`, 'g');
  let dropped = 0; // characters since the previous element, no longer kept
  let pending: Pending | undefined;
  let carry = '';
  for await (const chunk of chunks) {
    let text = carry + chunk;
    carry = '';
    for (;;) {
      if (pending) {
        const end = endIn(pending, tag, text);
        if (end < 0) {
          pending.parts.push(text);
          pending.length += text.length;
          if (dropped + pending.length > maxChars) throw fail('too-long', pending.parts.join(''));
          break;
        }
        pending.parts.push(text.slice(0, end));
        const xml = pending.parts.join('');
        if (dropped + xml.length > maxChars) throw fail('too-long', xml);
        pending = undefined;
        dropped = 0;
        yield xml;
        text = text.slice(end);
      }
      open.lastIndex = 0;
      const m = open.exec(text);
      if (m) {
        dropped += m.index;
        const afterName = m.index + m[0].length;
        pending = { parts: [text.slice(m.index, afterName)], length: afterName - m.index, prefix: m[1] ?? '', close: undefined, tail: '' };
        text = text.slice(afterName);
        continue;
      }
      // No start here: keep a start tag cut at the chunk's end for the next chunk.
      const cut = text.lastIndexOf('<');
      carry = cut >= 0 && text.length - cut <= tag.length + 40 ? text.slice(cut) : '';
      dropped += text.length - carry.length;
      if (dropped > maxChars) throw fail('too-long', '');
      break;
    }
  }
  if (pending) throw fail('unclosed', pending.parts.join(''));
}

/** The attributes of a start tag's text (`r="B5" t="s"`), by local name. */
export function attributes(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    const name = m[1]!;
    out[name.slice(name.indexOf(':') + 1)] = unescapeXml(m[2] ?? m[3] ?? '');
  }
  return out;
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** XML's escapes (`&amp;`, `&#233;`, `&#xE9;`) resolved. */
export function unescapeXml(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (whole, e: string) => {
    if (e[0] !== '#') return NAMED[e] ?? whole;
    const code = e[1] === 'x' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1));
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/** OOXML's own escape of characters XML cannot hold (`_x000D_` is a carriage return, `_x005F_` an underscore). */
export const unescapeOoxml = (s: string) =>
  s.includes('_x') ? s.replace(/_x([0-9a-fA-F]{4})_/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))) : s;

const T = /<(?:[A-Za-z_][\w.-]*:)?t(?:\s[^>]*)?(?:\/>|>([^<]*)<\/(?:[A-Za-z_][\w.-]*:)?t>)/g;
const PHONETIC = /<(?:[A-Za-z_][\w.-]*:)?rPh[\s>][\s\S]*?<\/(?:[A-Za-z_][\w.-]*:)?rPh>/g;

/**
 * The text of a string item (`<si>` or an inline `<is>`): every `<t>`, whether it stands alone
 * or in rich-text runs (`<r><rPr>…</rPr><t>Wr</t></r><r><t>ight</t></r>`), joined in order;
 * phonetic runs (`<rPh>`, a reading aid for Japanese) are no part of the text.
 */
export function stringItemText(xml: string): string {
  const item = xml.includes('rPh') ? xml.replace(PHONETIC, '') : xml;
  let text = '';
  for (const m of item.matchAll(T)) text += m[1] ?? '';
  return unescapeOoxml(unescapeXml(text));
}
