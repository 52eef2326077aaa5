/** The job progress line (terminal) and how log entries count as records imported, failed or refused. */
import { describe, expect, it } from 'vitest';
import { countEntry, formatJobProgress, type JobTally } from '../../src/cli/job-progress.js';
import type { LogEntry } from '../../src/contract/migration.js';

const entry = (action: string, logLevel: LogEntry['logLevel'], ids: number): LogEntry => ({
  component: 'Counterparties',
  action,
  logLevel,
  timestamp: '2026-01-01T00:00:00Z',
  message: 'm',
  entityReferenceIds: Array.from({ length: ids }, (_, i) => `id-${i}`),
});

describe('job progress', () => {
  it('counts imported and failed records of an import from its log entries', () => {
    const t: JobTally = {
      kind: 'import',
      jobId: 'abcdef0123456789',
      startedAt: 0,
      componentsCompleted: [],
      imported: 0,
      failed: 0,
      refused: 0,
    };
    for (const e of [
      entry('ImportedEntities', 'INFO', 1000),
      entry('ImportedEntities', 'ERROR', 1),
      entry('ImportedEntities', 'INFO', 500),
    ])
      countEntry(t, e);
    countEntry(t, entry('ValidatedStaging', 'ERROR', 1)); // another job's
    expect([t.imported, t.failed, t.refused]).toEqual([1500, 1, 0]);
    // the same action in a platform's other spelling (serve --dialect actions=upper-snake)
    countEntry(t, entry('IMPORTED_ENTITIES', 'INFO', 10));
    countEntry(t, entry('imported-entities', 'ERROR', 2));
    countEntry(t, entry('VALIDATED_STAGING', 'ERROR', 1)); // another job's
    expect([t.imported, t.failed, t.refused]).toEqual([1510, 3, 0]);
    t.imported = 1500;
    t.failed = 1;
    t.of = 200_000;
    expect(formatJobProgress(t, 35_000)).toBe(
      'import job abcdef01…: 1,500 of 200,000 imported (0%) · 1 failed · 0:35 · components completed: none',
    );
  });

  it('counts refused records of a validation', () => {
    const t: JobTally = {
      kind: 'validate-staging',
      jobId: 'abcdef0123456789',
      startedAt: 0,
      componentsCompleted: ['Contracts'],
      imported: 0,
      failed: 0,
      refused: 0,
    };
    for (const e of [entry('ValidatedStaging', 'ERROR', 1), entry('ValidatedStaging', 'ERROR', 1), entry('ValidatedStaging', 'INFO', 0)])
      countEntry(t, e);
    expect(formatJobProgress(t, 61_000)).toBe(
      'validate-staging job abcdef01…: 2 records refused so far · 1:01 · components completed: Contracts',
    );
  });
});
