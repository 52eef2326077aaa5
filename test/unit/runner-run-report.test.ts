/**
 * Per-row counting of a run (countRow, src/pipeline/runner/run-report.ts): every row read is
 * counted once, under its fate, and a refusal under the code of its first reason. Checked on
 * generated rows whose generator keeps the expected counts itself.
 */
import { describe, expect, it } from 'vitest';
import { countRow, newRunReport, type RowFate } from '../../src/pipeline/runner/run-report.js';
import { TOO_LARGE } from '../../src/pipeline/runner/send.js';
import type { FrontRow, RejectReason } from '../../src/pipeline/types.js';

const CODES = ['MISSING_REQUIRED_FIELD', 'INVALID_FIELD_VALUE', 'UNKNOWN_CODE', 'DUPLICATE_LEGACY_KEY', 'SOURCE_ROW_INVALID'];

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generate(n: number, seed: number) {
  const next = random(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  const rows: { row: FrontRow; fate: RowFate }[] = [];
  const truth = { rowsRead: 0, mapped: 0, rejected: 0, keptCorrected: 0, rejectedByReason: {} as Record<string, number> };
  const reject = (code: string) => {
    truth.rejected++;
    truth.rejectedByReason[code] = (truth.rejectedByReason[code] ?? 0) + 1;
  };
  for (let i = 0; i < n; i++) {
    const origin = { source: 'klanten', provenance: { file: 'klanten.csv', line: i + 2, byteOffset: i * 80, hash: `h${i}` } };
    const fate = pick<RowFate>(['kept-corrected', 'rejected', TOO_LARGE, 'mapped']);
    truth.rowsRead++;
    if (fate === 'rejected') {
      // zero to two reasons: a rejected row without any counts as UNKNOWN
      const reasons: RejectReason[] = Array.from({ length: Math.floor(next() * 3) }, () => ({
        field: 'f',
        code: pick(CODES),
        message: 'm',
      }));
      reject(reasons[0]?.code ?? 'UNKNOWN');
      rows.push({ row: { kind: 'rejected', component: 'Counterparties', reasons, row: origin }, fate });
      continue;
    }
    const mapped: FrontRow = { kind: 'mapped', component: 'Counterparties', legacyKey: `K${i}`, referenceId: `r${i}`, row: origin };
    if (fate === 'kept-corrected') truth.keptCorrected++;
    else if (fate === TOO_LARGE) reject(TOO_LARGE);
    else truth.mapped++;
    rows.push({ row: mapped, fate });
  }
  return { rows, truth };
}

describe('countRow', () => {
  it('counts every generated row once, under its fate, refusals by their first reason', () => {
    for (const seed of [1, 7, 2026]) {
      const { rows, truth } = generate(5_000, seed);
      const report = newRunReport({
        runId: 1,
        pipeline: 'p',
        pipelineFile: 'p.yaml',
        component: 'Counterparties',
        ledgerFile: 'l.db',
        recoveredRuns: [],
      });
      for (const { row, fate } of rows) countRow(report, row, fate);
      expect({
        rowsRead: report.rowsRead,
        mapped: report.mapped,
        rejected: report.rejected,
        keptCorrected: report.keptCorrected,
        rejectedByReason: report.rejectedByReason,
      }).toEqual(truth);
      // the counts the report settles from are untouched by counting rows
      expect([report.sent, report.staged, report.failed, report.skippedUnchanged]).toEqual([0, 0, 0, 0]);
    }
  });
});
