/**
 * The fault-injection rule language (docs/fault-injection.md), parsed once:
 *
 *   spec    := rule (";" rule)*
 *   rule    := target (":" setting)+
 *   target  := "*" | [METHOD " "] path-glob          ("*" in the glob matches any characters)
 *   setting := status=<4xx|5xx> | p=<0..1> | retry-after=<s> | latency=<ms>[-<ms>] | reset=<0..1> | cut=<0..1> | after=<bytes>
 *
 * One rule injects one kind of fault: an error status, added latency, a connection reset while
 * the request body arrives, or a stream response cut in the middle of a record.
 * @example parseFaultSpec('PUT /counterparty-management/*:status=503:p=0.1;*:latency=50-200') // two rules
 */
import { StagecoachError } from '../../contract/errors.js';

export type FaultKind = 'status' | 'latency' | 'reset' | 'cut';

export interface FaultRule {
  /** The rule as written, for headers and logs. */
  text: string;
  method?: string;
  /** The path glob as written. */
  path: string;
  pattern: RegExp;
  kind: FaultKind;
  /** Probability per matching request. */
  p: number;
  status?: number;
  retryAfter?: number;
  latency?: { min: number; max: number };
  /** reset/cut: bytes of body read (reset) or of response written (cut) before the fault. */
  after?: number;
}

const KNOWN = ['status', 'p', 'retry-after', 'latency', 'reset', 'cut', 'after'];

/** Parses a fault spec; an empty or blank spec is no rules. Throws CONFIG_INVALID naming the bad part. */
export function parseFaultSpec(spec: string | undefined): FaultRule[] {
  if (!spec?.trim()) return [];
  return spec
    .split(';')
    .map((r) => r.trim())
    .filter(Boolean)
    .map((text, i) => parseRule(text, i + 1));
}

function parseRule(text: string, n: number): FaultRule {
  const bad = (what: string) =>
    new StagecoachError(
      'CONFIG_INVALID',
      `fault rule ${n} \`${text}\`: ${what}; expected e.g. "PUT /counterparty-management/*:status=503:p=0.1" (docs/fault-injection.md)`,
      {
        field: 'faults',
        value: text,
      },
    );
  const [target = '', ...settings] = text.split(':');
  if (settings.length === 0) throw bad('no fault given after the target');
  const targetMatch = /^(?:([A-Za-z]+|\*)\s+)?(\S+)$/.exec(target.trim());
  if (!targetMatch) throw bad(`target "${target}" is not "[METHOD ]path-glob"`);
  const method = targetMatch[1] && targetMatch[1] !== '*' ? targetMatch[1].toUpperCase() : undefined;
  const path = targetMatch[2]!;
  const values = new Map<string, string>();
  for (const setting of settings) {
    const eq = setting.indexOf('=');
    const key = (eq < 0 ? setting : setting.slice(0, eq)).trim().toLowerCase();
    if (!KNOWN.includes(key)) throw bad(`unknown setting "${key}" (known: ${KNOWN.join(', ')})`);
    if (eq < 0) throw bad(`setting "${key}" needs a value (${key}=…)`);
    if (values.has(key)) throw bad(`setting "${key}" given twice`);
    values.set(key, setting.slice(eq + 1).trim());
  }
  const kinds = (['status', 'latency', 'reset', 'cut'] as const).filter((k) => values.has(k));
  if (kinds.length !== 1)
    throw bad(
      kinds.length === 0
        ? 'no fault kind (status, latency, reset or cut)'
        : `one fault kind per rule, got ${kinds.join(' and ')}: write one rule each`,
    );
  const kind = kinds[0]!;

  const probability = (key: string, raw: string) => {
    const p = Number(raw);
    if (raw === '' || !Number.isFinite(p) || p < 0 || p > 1) throw bad(`${key} must be a probability from 0 to 1, got "${raw}"`);
    return p;
  };
  const count = (key: string, raw: string) => {
    if (!/^\d+$/.test(raw)) throw bad(`${key} must be a whole number, got "${raw}"`);
    return Number(raw);
  };
  if ((kind === 'reset' || kind === 'cut') && values.has('p')) throw bad(`${kind}=<probability> already is the probability; drop p=`);
  if (values.has('retry-after') && kind !== 'status') throw bad('retry-after goes with status=');
  if (values.has('after') && kind !== 'reset' && kind !== 'cut') throw bad('after= goes with reset= or cut=');

  const rule: FaultRule = {
    text,
    method,
    path,
    pattern: globToRegExp(path),
    kind,
    p: values.has('p') ? probability('p', values.get('p')!) : 1,
  };
  if (kind === 'status') {
    const status = count('status', values.get('status')!);
    if (status < 400 || status > 599) throw bad(`status must be from 400 to 599, got ${status}`);
    rule.status = status;
    if (values.has('retry-after')) rule.retryAfter = count('retry-after', values.get('retry-after')!);
    else if (status === 429 || status === 503) rule.retryAfter = 1;
  } else if (kind === 'latency') {
    const m = /^(\d+)(?:-(\d+))?$/.exec(values.get('latency')!);
    if (!m) throw bad(`latency must be milliseconds or a range like 50-200, got "${values.get('latency')}"`);
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : Number(m[2]);
    if (max < min) throw bad(`latency range ${min}-${max} runs backwards`);
    rule.latency = { min, max };
  } else {
    rule.p = probability(kind, values.get(kind)!);
    if (values.has('after')) rule.after = count('after', values.get('after')!);
  }
  return rule;
}

/** `*` matches any characters (slashes included); everything else is literal; the whole path must match. */
function globToRegExp(glob: string): RegExp {
  if (glob === '*') return /^/;
  const body = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`);
}

/** Whether a rule applies to a request. */
export function ruleMatches(rule: FaultRule, method: string, path: string): boolean {
  return (rule.method === undefined || rule.method === method) && rule.pattern.test(path);
}
