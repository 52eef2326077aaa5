/**
 * Generators of foreign exports (exports stagecoach was never tuned on), each with planted
 * defects and the truth the generator knows: English core banking (UK/Ireland), a US CRM with
 * month-first dates, a German latin-1 export, a French/Belgian one and a mainframe fixed-width
 * extract with its copybook. Used by the corpus test (test/e2e/init-corpus.test.ts) and the
 * init bench. Seeded: the same options give the same bytes.
 */
import type { ForeignExport, ForeignKind, ForeignOptions } from './common.js';
import { generateFixedWidth } from './fixed-width.js';
import { generateFrenchBelgian } from './french-belgian.js';
import { generateGermanLatin1 } from './german-latin1.js';
import { generateUkCoreBanking } from './uk-core-banking.js';
import { generateUsCrm } from './us-crm.js';

export { FOREIGN_KINDS, type ForeignExport, type ForeignKind, type ForeignOptions, type TruthRow } from './common.js';

const GENERATORS: Record<ForeignKind, (o: ForeignOptions) => Promise<ForeignExport>> = {
  'uk-core-banking': generateUkCoreBanking,
  'us-crm': generateUsCrm,
  'german-latin1': generateGermanLatin1,
  'french-belgian': generateFrenchBelgian,
  'fixed-width': generateFixedWidth,
};

/**
 * @example const exp = await generateForeignExport('us-crm', { out: 'corpus/us', rows: 500 });
 *          exp.truth.get('C-100000') // { dateOfBirth: '1971-09-25', phone: '+12015550123', country: 'US', income: … }
 */
export function generateForeignExport(kind: ForeignKind, options: ForeignOptions): Promise<ForeignExport> {
  return GENERATORS[kind](options);
}
