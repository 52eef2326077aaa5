import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderStagedCounterpartyDoc } from '../../src/service/migration/contract-doc.js';
import { ROOT } from '../support/cli.js';

describe('docs/staged-counterparty.md', () => {
  it('is what the contract, its classification and the code lists generate (npm run docs:contract rewrites it)', () => {
    const shipped = readFileSync(join(ROOT, 'docs', 'staged-counterparty.md'), 'utf8');
    expect(shipped === renderStagedCounterpartyDoc(), 'docs/staged-counterparty.md is out of date: run npm run docs:contract').toBe(true);
  });

  it('lists every required field with its code list and checks', () => {
    const doc = renderStagedCounterpartyDoc();
    expect(doc).toContain('| `surname` | string | yes |');
    expect(doc).toContain('| `income.frequency` | string | yes | income frequency: `Weekly`, `FourWeekly`, `Monthly`');
    expect(doc).toContain(
      '| `relations[].to` | UUID | yes |  | a counterparty staged in the migration or live on the platform (RELATION_TARGET_MISSING) | none |',
    );
  });
});
