/**
 * Privacy of what stagecoach writes: which values are personal, and how reports, printouts and
 * logs show them (masked, hashed or revealed). See docs/privacy.md.
 */
export { maskValue, hashValue } from './mask.js';
export { Redactor, REVEAL_ALL, type RedactorOptions } from './redact.js';
export { VALUES_MODES, type ValuesMode, type PersonalClass } from '../contract/classification.js';
export { columnClassifier } from './columns.js';
export { migrationKey, privacySecretFile } from './key.js';
export { personalDataHeld, purge, type HeldData, type PurgeResult } from './retention.js';
