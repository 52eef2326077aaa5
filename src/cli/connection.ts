/**
 * Connection settings shared by every command that talks to the platform. Each setting comes
 * from, in order: a flag, an environment variable, a config file (`--config <file>` or
 * ./stagecoach.config.json / .yaml / .yml, JSON or YAML), and finally the embedded service's
 * demo identity on http://127.0.0.1:8787.
 *
 * @example
 *   const cmd = addConnectionOptions(program.command('token'));
 *   cmd.action(async (opts) => { const client = createClient(resolveConnection(opts)); … });
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { closestName } from '../contract/closest-name.js';
import { StagecoachError } from '../contract/errors.js';
import type { ClientOptions, StagecoachClient } from '../client/index.js';
import { yamlData } from '../pipeline/definition/yaml-file.js';

/** The settings, their flag, environment variable, config key and default, declared once. */
export const CONNECTION_SETTINGS = [
  {
    key: 'baseUrl',
    flag: '--base-url <url>',
    env: 'STAGECOACH_BASE_URL',
    fallback: 'http://127.0.0.1:8787',
    describe: 'base address of the lending service',
  },
  { key: 'clientId', flag: '--client-id <id>', env: 'STAGECOACH_CLIENT_ID', fallback: 'demo-client', describe: 'API client id' },
  {
    key: 'clientSecret',
    flag: '--client-secret <secret>',
    env: 'STAGECOACH_CLIENT_SECRET',
    fallback: 'demo-secret',
    describe: 'API client secret (prefer the environment variable: flags show in ps)',
  },
  { key: 'brokerKey', flag: '--broker-key <key>', env: 'STAGECOACH_BROKER_KEY', fallback: 'demo-broker', describe: 'tenant (broker key)' },
  {
    key: 'labelReferenceId',
    flag: '--label <reference>',
    env: 'STAGECOACH_LABEL',
    fallback: 'demo-label',
    describe: 'white-label reference id',
  },
] as const;

export type ConnectionKey = (typeof CONNECTION_SETTINGS)[number]['key'];

const timeoutsSchema = z.object({ connectMs: z.number(), headersMs: z.number(), bodyMs: z.number() }).partial().strict();
const retrySchema = z
  .object({ retries: z.number(), baseDelayMs: z.number(), maxDelayMs: z.number(), maxRetryTimeMs: z.number() })
  .partial()
  .strict();

/**
 * What a config file may hold: the connection settings, plus client tuning. Strict: a misspelt
 * key (`clientSecert`) would otherwise be ignored and the command fall back to the demo value.
 * Keys starting with `x-` are left alone (notes, settings of other tools, of a newer stagecoach).
 */
export const connectionFileSchema = z
  .object({
    baseUrl: z.string().optional(),
    clientId: z.string().optional(),
    clientSecret: z.string().optional(),
    brokerKey: z.string().optional(),
    labelReferenceId: z.string().optional(),
    /** Short alias of labelReferenceId. */
    label: z.string().optional(),
    timeouts: timeoutsSchema.optional(),
    retry: retrySchema.optional(),
    versions: z.record(z.string(), z.string()).optional(),
  })
  .strict();

/** The keys a config file may hold, per object (`''`: the top level). */
const KNOWN_KEYS: Record<string, readonly string[]> = {
  '': Object.keys(connectionFileSchema.shape),
  timeouts: Object.keys(timeoutsSchema.shape),
  retry: Object.keys(retrySchema.shape),
};
export type ConnectionFile = z.infer<typeof connectionFileSchema>;

export interface ConnectionFlags {
  baseUrl?: string;
  clientId?: string;
  clientSecret?: string;
  brokerKey?: string;
  label?: string;
  config?: string;
}

export interface ResolvedConnection
  extends Pick<
    ClientOptions,
    'baseUrl' | 'clientId' | 'clientSecret' | 'brokerKey' | 'labelReferenceId' | 'timeouts' | 'retry' | 'versions'
  > {
  /** Where each connection setting came from (for `--verbose` style diagnostics; never the value of the secret). */
  sources: Record<ConnectionKey, 'flag' | 'env' | 'config' | 'default'>;
  /** The config file read, if any. */
  configFile?: string;
}

const DEFAULT_CONFIG_FILES = ['stagecoach.config.json', 'stagecoach.config.yaml', 'stagecoach.config.yml'];

/** Adds the connection flags (and --config) to a command. */
export function addConnectionOptions(command: Command): Command {
  for (const s of CONNECTION_SETTINGS) command.option(s.flag, `${s.describe} (env ${s.env})`);
  command.option('--config <file>', 'config file with connection settings (JSON or YAML; default ./stagecoach.config.json if present)');
  return command;
}

/**
 * Flags → environment → config file → demo defaults. Throws CONFIG_INVALID naming the file
 * (and line, for YAML) when the config file cannot be read.
 */
export function resolveConnection(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): ResolvedConnection {
  const { file, data } = loadConfigFile(flags.config, cwd);
  const fromFlags: Record<ConnectionKey, string | undefined> = {
    baseUrl: flags.baseUrl,
    clientId: flags.clientId,
    clientSecret: flags.clientSecret,
    brokerKey: flags.brokerKey,
    labelReferenceId: flags.label,
  };
  const fromFile: Record<ConnectionKey, string | undefined> = {
    baseUrl: data.baseUrl,
    clientId: data.clientId,
    clientSecret: data.clientSecret,
    brokerKey: data.brokerKey,
    labelReferenceId: data.labelReferenceId ?? data.label,
  };
  const values = {} as Record<ConnectionKey, string>;
  const sources = {} as ResolvedConnection['sources'];
  for (const s of CONNECTION_SETTINGS) {
    const flag = fromFlags[s.key];
    const envValue = env[s.env];
    if (flag !== undefined && flag !== '') [values[s.key], sources[s.key]] = [flag, 'flag'];
    else if (envValue !== undefined && envValue !== '') [values[s.key], sources[s.key]] = [envValue, 'env'];
    else if (fromFile[s.key] !== undefined) [values[s.key], sources[s.key]] = [fromFile[s.key]!, 'config'];
    else [values[s.key], sources[s.key]] = [s.fallback, 'default'];
  }
  try {
    new URL(values.baseUrl);
  } catch {
    const from = sources.baseUrl === 'flag' ? '--base-url' : sources.baseUrl === 'env' ? 'STAGECOACH_BASE_URL' : `baseUrl in ${file}`;
    throw new StagecoachError(
      'CONFIG_INVALID',
      `${from}: expected an absolute URL such as http://127.0.0.1:8787, got ${JSON.stringify(values.baseUrl)}`,
      { field: 'baseUrl', value: values.baseUrl },
    );
  }
  const out: ResolvedConnection = { ...values, sources };
  if (file) out.configFile = file;
  if (data.timeouts) out.timeouts = data.timeouts;
  if (data.retry) out.retry = data.retry;
  if (data.versions) out.versions = data.versions as ClientOptions['versions'];
  return out;
}

/**
 * A client built from the resolved connection (the command's flags included). The client (and
 * undici under it, about 90 ms and 20 MB) is loaded here, on first use, so that the commands
 * without network (plan, map, status, --help) start without it.
 */
export async function clientFromOptions(flags: ConnectionFlags, extra: Pick<ClientOptions, 'logger'> = {}): Promise<StagecoachClient> {
  const { sources: _sources, configFile: _file, ...options } = resolveConnection(flags);
  const { createClient } = await import('../client/index.js');
  return createClient({ ...options, ...extra });
}

function loadConfigFile(explicit: string | undefined, cwd: string): { file?: string; data: ConnectionFile } {
  let file: string | undefined;
  if (explicit) {
    file = resolve(cwd, explicit);
    if (!existsSync(file))
      throw new StagecoachError('CONFIG_INVALID', `--config ${explicit}: file not found (looked at ${file})`, { file });
  } else {
    file = DEFAULT_CONFIG_FILES.map((f) => resolve(cwd, f)).find((f) => existsSync(f));
    if (!file) return { data: {} };
  }
  const text = readFileSync(file, 'utf8');
  let raw: unknown;
  // YAML knows where each key is; a JSON file's message names the key without a line.
  let lineOfKey: (path: readonly string[], key: string) => number | undefined = () => undefined;
  if (file.endsWith('.json')) {
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new StagecoachError('CONFIG_INVALID', `${file}: not valid JSON: ${(err as Error).message}`, { file });
    }
  } else {
    const lineCounter = new LineCounter();
    const doc = parseDocument(text, { lineCounter });
    const first = doc.errors[0];
    if (first) {
      const pos = lineCounter.linePos(first.pos[0]);
      throw new StagecoachError('CONFIG_INVALID', `${file}:${pos.line}:${pos.col}: not valid YAML: ${first.message.split('\n')[0]}`, {
        file,
        line: pos.line,
        column: pos.col,
      });
    }
    raw = yamlData(doc, lineCounter, file);
    lineOfKey = (path, key) => {
      const node = doc.getIn(path, true);
      const pair = isMap(node) ? node.items.find((p) => isScalar(p.key) && p.key.value === key) : undefined;
      const at = isScalar(pair?.key) ? pair.key.range?.[0] : undefined;
      return at === undefined ? undefined : lineCounter.linePos(at).line;
    };
  }
  const parsed = connectionFileSchema.safeParse(withoutExtensionKeys(raw ?? {}));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      const key = issue.keys[0]!;
      const known = KNOWN_KEYS[path.join('.')] ?? [];
      const near = closestName(key, known);
      const line = lineOfKey(path, key);
      const field = [...path, key].join('.');
      throw new StagecoachError(
        'CONFIG_INVALID',
        `${file}${line ? `:${line}` : ''}: unknown key ${field}${near ? ` (did you mean ${[...path, near].join('.')}?)` : ''}; the keys${
          path.length ? ` of ${path.join('.')}` : ''
        } are ${known.join(', ')}${path.length ? '' : ' (a key starting with x- is ignored)'}`,
        { file, field, ...(line ? { line } : {}) },
      );
    }
    const field = path.join('.') || '(root)';
    throw new StagecoachError('CONFIG_INVALID', `${file}: ${field}: ${issue.message}`, { file, field });
  }
  return { file, data: parsed.data };
}

/** The top-level keys starting with `x-` are not stagecoach's: dropped before the strict check. */
function withoutExtensionKeys(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
  return Object.fromEntries(Object.entries(raw).filter(([k]) => !k.startsWith('x-')));
}
