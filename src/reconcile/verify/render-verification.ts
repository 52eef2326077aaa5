/**
 * The verification as text: its headline (the report's first lines and the terminal), the
 * Markdown section, the HTML section. All three print the model (verification-model.ts) and
 * decide nothing; values in it are already shown as the report's privacy mode says.
 */
import type { FieldDifferenceExample, VerificationReport, VerifiedRecordRef } from './verification-model.js';

const n = (x: number) => x.toLocaleString('en-US');
/** Records shown per finding in Markdown, HTML and on the terminal (the JSON lists up to RECORDS_LISTED). */
const SHOWN = 10;

/**
 * One sentence: verified identical, or what failed.
 * @example verificationHeadline(v) // 'Verified: 228 of 228 imported records identical on the platform (100%)'
 */
export function verificationHeadline(v: VerificationReport): string {
  const same = v.identical + v.identicalAfterAccepted;
  const pct = v.imported === 0 ? 100 : Math.floor((same / v.imported) * 1000) / 10;
  const accepted = v.identicalAfterAccepted > 0 ? ` (${n(v.identicalAfterAccepted)} after accepted normalisations)` : '';
  // "0 of 0" is neither a failure nor a success: nothing is imported to verify yet.
  if (v.imported === 0 && v.passed)
    return `Nothing to verify yet: no record of ${v.pipelines.join(', ') || 'the pipelines'} is imported (migration ${v.migrationId})`;
  const verdict = v.passed ? 'Verified' : 'VERIFICATION FAILED';
  const added = v.forms?.added.records ? `; ${n(v.forms.added.records)} hold values added by the platform` : '';
  return `${verdict}: ${n(same)} of ${n(v.imported)} imported records identical on the platform (${pct}%)${accepted}${added}`;
}

/** Lines on the forms the platform holds the data in (platform-forms.ts), for the terminal and Markdown. */
export function formsLines(v: VerificationReport, shown = SHOWN): string[] {
  const out: string[] = [];
  const fieldsText = (fields: Record<string, number>) =>
    Object.entries(fields)
      .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
      .map(([f, c]) => `${f} ${n(c)}`)
      .join(', ');
  const other = v.forms?.otherForm;
  if (other?.records)
    out.push(
      `${n(other.records)} of the identical records came in another form than sent, the same data (${fieldsText(other.fields)}): UUID case, Unicode normalisation, ISO 8601 date form, numbers as strings`,
    );
  const added = v.forms?.added;
  if (added?.records) {
    out.push(
      `added by the platform: ${n(added.records)} records hold values they were not sent with (${fieldsText(added.fields)}); not counted as identical`,
    );
    for (const r of added.examples.slice(0, shown)) out.push(`  ${where(r)} (${r.legacyKey}): ${r.field} ${r.held}, not sent`);
  }
  return out;
}

const where = (r: VerifiedRecordRef) => `${r.file}:${r.line}${r.importedIn ? ` [imported in migration ${r.importedIn}]` : ''}`;
/** Said under the counts when some records live from an earlier migration of the pipelines. */
const earlierText = (v: VerificationReport) =>
  `${n(v.importedEarlier)} of the ${n(v.imported)} imported records live on the platform from an earlier migration of the same pipeline and were not sent again since: verified against what that migration's run sent.`;
const example = (f: string, r: FieldDifferenceExample) =>
  `${where(r)} (${r.legacyKey}): ${f}: sent ${r.sent}, platform holds ${r.held}${r.acceptedBy ? ` — accepted (${r.acceptedBy})` : ''}`;

/** How identity was established: by hash, or field by field. */
const provenText = (v: VerificationReport) =>
  `${n(v.proven)} proven identical by hash (no export read for them); ${n(v.compared)} held otherwise than sent compared field by field with the export`;

/** The findings as plain lines (terminal), after the headline. */
export function verificationLines(v: VerificationReport): string[] {
  const out: string[] = [];
  // Which pipelines and which migration the verdict is about.
  out.push(`  pipeline${v.pipelines.length === 1 ? '' : 's'} ${v.pipelines.join(', ') || '(none)'} · migration ${v.migrationId}`);
  out.push(
    `  ${n(v.streamed)} live counterparties streamed${v.resumes ? ` (${v.resumes} resumed after a cut)` : ''}; ${n(v.imported)} imported records in the ledger${v.importedEarlier ? ` (${n(v.importedEarlier)} from an earlier migration of the pipeline)` : ''}; ${v.seconds} s`,
  );
  out.push(`  ${provenText(v)}`);
  for (const f of v.fields) {
    out.push(`  ${f.field}: ${n(f.differing)} differ${f.accepted ? `, ${n(f.accepted)} accepted` : ''}`);
    for (const r of f.records.slice(0, SHOWN)) out.push(`    ${example(f.field, r)}`);
  }
  if (v.notHeld.total) {
    out.push(`  not held by the platform: ${n(v.notHeld.total)}`);
    for (const r of v.notHeld.records.slice(0, SHOWN)) out.push(`    ${where(r)} (${r.legacyKey}) ${r.referenceId}`);
  }
  if (v.notVerifiable.total) {
    out.push(`  not verifiable: ${n(v.notVerifiable.total)}`);
    for (const r of v.notVerifiable.records.slice(0, SHOWN)) out.push(`    ${where(r)} (${r.legacyKey}): ${r.why}`);
  }
  if (v.strays.total) {
    out.push(`  strays: ${n(v.strays.total)} (${n(v.strays.earlierMigration)} known to the ledger, ${n(v.strays.unknown)} unknown)`);
    for (const s of v.strays.records.slice(0, SHOWN)) out.push(`    ${strayText(s)}`);
  }
  if (v.preExisting) out.push(`  ${n(v.preExisting)} live counterparties from before the migration's first record, not examined`);
  if (v.otherPipelines)
    out.push(`  ${n(v.otherPipelines)} live counterparties imported by other pipelines of this ledger, verified with their own migrations`);
  const notShown = Object.entries(v.notShown);
  if (notShown.length)
    out.push(`  not shown by the platform's stream (not compared): ${notShown.map(([f, c]) => `${f} (${n(c)})`).join(', ')}`);
  if (v.accept.length) out.push(`  accepted normalisations: ${v.accept.join(', ')}`);
  for (const line of formsLines(v)) out.push(`  ${line}`);
  return out;
}

function strayText(s: VerificationReport['strays']['records'][number]): string {
  if (s.origin === 'unknown')
    return `${s.referenceId} (sequence ${s.sequenceNumber ?? '?'}): no ledger record knows it (created by someone else)`;
  return `${s.referenceId}: ${s.pipeline} ${s.file}:${s.line} (${s.legacyKey}), last sent to migration ${s.migrationId ?? '?'} (${s.state})`;
}

const cell = (text: string) => text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

/** The Markdown section. */
export function verificationMarkdown(v: VerificationReport): string[] {
  const out: string[] = ['## Verification: what the platform holds', '', `**${verificationHeadline(v)}**`, ''];
  for (const p of v.problems) out.push(`- ${p}`);
  if (v.problems.length) out.push('');
  out.push('| Imported | Identical | Identical after accepted | Differ | Not held | Not verifiable | Strays | Streamed |');
  out.push('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  out.push(
    `| ${n(v.imported)} | ${n(v.identical)} | ${n(v.identicalAfterAccepted)} | ${n(v.differing)} | ${n(v.notHeld.total)} | ${n(v.notVerifiable.total)} | ${n(v.strays.total)} | ${n(v.streamed)} |`,
    '',
  );
  out.push(`${provenText(v)}.`, '');
  if (v.importedEarlier) out.push(earlierText(v), '');
  if (v.fields.length) {
    out.push('| Field | Differ | Accepted | Examples (legacy file:line) |', '| --- | ---: | ---: | --- |');
    for (const f of v.fields)
      out.push(
        `| ${f.field} | ${n(f.differing)} | ${n(f.accepted)} | ${cell(
          f.records
            .slice(0, 3)
            .map((r) => example(f.field, r))
            .join('<br>'),
        )} |`,
      );
    out.push('');
  }
  const list = (title: string, lines: string[], total: number) => {
    if (!total) return;
    out.push(`**${title}** (${n(total)}${total > lines.length ? `, first ${lines.length}` : ''}):`, '');
    for (const l of lines) out.push(`- ${l}`);
    out.push('');
  };
  for (const [title, items, total] of findingLists(v, (id) => `\`${id}\``)) list(title, items, total);
  const notShown = Object.entries(v.notShown);
  if (notShown.length)
    out.push(`Not shown by the platform's stream, not compared: ${notShown.map(([f, c]) => `${f} (${n(c)})`).join(', ')}.`, '');
  if (v.preExisting)
    out.push(
      `${n(v.preExisting)} live counterparties existed before the migration's first record and no ledger knows them: not examined.`,
      '',
    );
  if (v.otherPipelines)
    out.push(
      `${n(v.otherPipelines)} live counterparties were imported by other pipelines of this ledger, in migrations of their own: verified with those, not here.`,
      '',
    );
  if (v.accept.length) out.push(`Accepted normalisations: ${v.accept.map((a) => `\`${a}\``).join(', ')}.`, '');
  const forms = formsLines(v);
  if (forms.length) out.push(...forms.map((l) => (l.startsWith('  ') ? `  - ${l.trim()}` : `- ${l}`)), '');
  return out;
}

/** The HTML section (`esc` escapes text). */
export function verificationHtml(v: VerificationReport, esc: (s: string) => string): string[] {
  const h: string[] = ['<h2>Verification: what the platform holds</h2>'];
  h.push(`<div class="status ${v.passed ? 'ok' : 'bad'}">${esc(verificationHeadline(v))}</div>`);
  if (v.problems.length) h.push('<ul class="problems">', ...v.problems.map((p) => `<li>${esc(p)}</li>`), '</ul>');
  h.push(
    '<table><thead><tr><th>Imported</th><th>Identical</th><th>Identical after accepted</th><th>Differ</th><th>Not held</th><th>Not verifiable</th><th>Strays</th><th>Streamed</th></tr></thead><tbody>',
    `<tr>${[v.imported, v.identical, v.identicalAfterAccepted, v.differing, v.notHeld.total, v.notVerifiable.total, v.strays.total, v.streamed].map((x) => `<td class="num">${n(x)}</td>`).join('')}</tr>`,
    '</tbody></table>',
  );
  if (v.importedEarlier) h.push(`<p>${esc(earlierText(v))}</p>`);
  if (v.fields.length) {
    h.push('<table><thead><tr><th>Field</th><th>Differ</th><th>Accepted</th><th>Examples (legacy file:line)</th></tr></thead><tbody>');
    for (const f of v.fields)
      h.push(
        `<tr><td><code>${esc(f.field)}</code></td><td class="num">${n(f.differing)}</td><td class="num">${n(f.accepted)}</td><td>${f.records
          .slice(0, 3)
          .map((r) => esc(example(f.field, r)))
          .join('<br>')}</td></tr>`,
      );
    h.push('</tbody></table>');
  }
  const list = (title: string, lines: string[], total: number) => {
    if (!total) return;
    h.push(`<h3>${esc(title)} (${n(total)})</h3>`, '<ul>', ...lines.map((l) => `<li>${esc(l)}</li>`), '</ul>');
  };
  for (const [title, items, total] of findingLists(v, (id) => id)) list(title, items, total);
  const forms = formsLines(v);
  if (forms.length) h.push('<ul class="forms">', ...forms.map((l) => `<li>${esc(l.trim())}</li>`), '</ul>');
  return h;
}

/** The lists of records the Markdown and HTML sections both show: title, first items, total. */
function findingLists(v: VerificationReport, id: (referenceId: string) => string): Array<[string, string[], number]> {
  return [
    [
      'Imported, not held by the platform',
      v.notHeld.records.slice(0, SHOWN).map((r) => `${where(r)} (${r.legacyKey}) ${id(r.referenceId)}`),
      v.notHeld.total,
    ],
    ['Not verifiable', v.notVerifiable.records.slice(0, SHOWN).map((r) => `${where(r)} (${r.legacyKey}): ${r.why}`), v.notVerifiable.total],
    ['Strays: live counterparties no ledger record of an import explains', v.strays.records.slice(0, SHOWN).map(strayText), v.strays.total],
  ];
}
