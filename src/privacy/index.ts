/**
 * Privacy of what stagecoach writes: which values are personal, and how reports, printouts and
 * logs show them (masked, hashed or revealed). See docs/privacy.md.
 */
export { maskValue, hashValue } from './mask.js';
export { Redactor, REVEAL_ALL, VALUES_MODES, type ValuesMode, type PersonalClass, type RedactorOptions } from './redact.js';
export { migrationKey, privacySecretFile } from './key.js';
