/**
 * The funnel of the reconciliation report as an inline SVG: one centred bar per step of the
 * chain, its width proportional to the records that reached it, the records lost between two
 * steps shown beside the drop with their main reasons. Plain markup, no script, no external
 * reference, so the page stays self-contained and renders the same in any browser or viewer.
 */
import { STEP_LABELS, type Explanation, type StepName } from './report-model.js';

export interface FunnelStep {
  step: StepName;
  count: number;
  /** Why records were lost between the previous step and this one. */
  lost: Explanation[];
  /** Records lost that no reason explains. */
  unaccounted: number;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const fmt = (n: number) => n.toLocaleString('en-US');

/**
 * Renders the funnel. Width 1160, height grows with the steps and the reasons shown.
 * @example renderFunnelSvg([{ step: 'sourceRows', count: 10, lost: [], unaccounted: 0 }, …])
 */
export function renderFunnelSvg(steps: FunnelStep[], options: { title?: string } = {}): string {
  const width = 1160;
  const rowH = 46;
  const lineH = 16;
  const top = options.title ? 34 : 8;
  const labelW = 170;
  const barMax = 480;
  const cx = labelW + 20 + barMax / 2;
  const notesX = labelW + 20 + barMax + 28;
  const max = Math.max(1, ...steps.map((s) => s.count));
  // the notes of a drop: a headline, then up to four reasons, one a line
  const notes = steps.map((s, i) => {
    if (i === 0) return [] as Array<{ text: string; cls: string }>;
    const lostCount = steps[i - 1]!.count - s.count;
    if (lostCount === 0 && s.unaccounted === 0 && s.lost.length === 0) return [];
    const lines = [{ text: `${lostCount >= 0 ? '−' : '+'}${fmt(Math.abs(lostCount))} record(s)`, cls: 'f-drop' }];
    for (const e of s.lost.slice(0, 4))
      lines.push({
        text: `${fmt(e.count)} ${e.code}${e.label !== e.code ? ` (${e.label})` : ''}`,
        cls: e.accounted ? 'f-lost' : 'f-lost f-bad',
      });
    if (s.lost.length > 4) lines.push({ text: `and ${s.lost.length - 4} more reason(s)`, cls: 'f-lost' });
    if (s.unaccounted) lines.push({ text: `${fmt(s.unaccounted)} unaccounted`, cls: 'f-lost f-bad' });
    return lines;
  });
  const gapOf = (i: number) => Math.max(28, notes[i]!.length * lineH + 8);
  const height = top + steps.length * rowH + steps.reduce((a, _s, i) => a + (i > 0 ? gapOf(i) : 0), 0) + 8;
  const parts: string[] = [];
  parts.push(
    `<svg class="funnel" role="img" aria-label="${esc(options.title ?? 'Reconciliation funnel')}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">`,
  );
  if (options.title) parts.push(`<text x="0" y="20" class="f-title">${esc(options.title)}</text>`);
  let y = top;
  let prevW = 0;
  steps.forEach((s, i) => {
    const w = Math.max(s.count > 0 ? 3 : 0, (s.count / max) * barMax);
    if (i > 0) {
      const gapH = gapOf(i);
      y += gapH;
      // the trapezoid joining two bars shows the narrowing of the funnel
      const yTop = y - gapH;
      parts.push(
        `<path class="f-neck" d="M${(cx - prevW / 2).toFixed(1)},${yTop} L${(cx + prevW / 2).toFixed(1)},${yTop} L${(cx + w / 2).toFixed(1)},${y} L${(cx - w / 2).toFixed(1)},${y} Z"/>`,
      );
      const lines = notes[i]!;
      const first = yTop + gapH / 2 - ((lines.length - 1) * lineH) / 2 + 5;
      lines.forEach((l, k) =>
        parts.push(`<text x="${notesX}" y="${(first + k * lineH).toFixed(1)}" class="${l.cls}">${esc(l.text)}</text>`),
      );
    }
    parts.push(`<text x="${labelW}" y="${y + rowH / 2 + 5}" text-anchor="end" class="f-label">${esc(STEP_LABELS[s.step])}</text>`);
    parts.push(`<rect class="f-bar f-${s.step}" x="${(cx - w / 2).toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${rowH}" rx="4"/>`);
    const inside = w > 90;
    parts.push(
      `<text x="${inside ? cx : (cx + w / 2 + 8).toFixed(1)}" y="${y + rowH / 2 + 6}" text-anchor="${inside ? 'middle' : 'start'}" class="${inside ? 'f-count' : 'f-count-out'}">${fmt(s.count)}</text>`,
    );
    prevW = w;
    y += rowH;
  });
  parts.push('</svg>');
  return parts.join('\n');
}
