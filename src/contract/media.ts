/**
 * Media types, API versions per functional group, and the Accept header grammar of the
 * specification ("application/json;api-version=2025.1.0").
 */

export const MEDIA = {
  json: 'application/json',
  problem: 'application/problem+json',
  jsonSeq: 'application/json-seq',
  jsonl: 'application/jsonl',
  multipart: 'multipart/form-data',
} as const;

export type StreamFormat = 'jsonl' | 'json-seq';

export const FUNCTIONAL_GROUPS = [
  'authentication',
  'process-orchestration',
  'lodging',
  'counterparty-management',
  'migration-assistance',
] as const;
export type FunctionalGroup = (typeof FUNCTIONAL_GROUPS)[number];

/**
 * Versions each group serves, newest first. The spec names 2026.1.0 (process definitions),
 * 2022.1.0 (lodging), 2025.1.0 (counterparties), 2024.1.0 (event subscriptions); the versions
 * of authentication and migration assistance are not shown and are our choice
 * (docs/contract-gaps.md). Event-subscription routes live inside a group's path but carry the
 * event-subscription version, so they are keyed separately.
 */
export const API_VERSIONS = {
  authentication: ['2024.1.0'],
  'process-orchestration': ['2026.1.0'],
  lodging: ['2022.1.0'],
  'counterparty-management': ['2025.1.0'],
  'migration-assistance': ['2025.1.0'],
  events: ['2024.1.0'],
} as const satisfies Record<FunctionalGroup | 'events', readonly string[]>;
export type VersionedArea = keyof typeof API_VERSIONS;

/** Every version the service supports, for the JWKS `X-Supported-Versions` header. */
export const SUPPORTED_VERSIONS: readonly string[] = [...new Set(Object.values(API_VERSIONS).flat())].sort();

const VERSION_SHAPE = /^\d{4}\.\d+\.\d+$/;

export interface AcceptedType {
  type: string; // lower-cased "type/subtype"
  version?: string;
  q: number;
}

/** Parses an Accept header into its media ranges with their `api-version` and `q` parameters. */
export function parseAccept(header: string | undefined): AcceptedType[] {
  if (!header?.trim()) return [];
  return header.split(',').map((range) => {
    const [type = '', ...params] = range.split(';').map((p) => p.trim());
    const out: AcceptedType = { type: type.toLowerCase(), q: 1 };
    for (const param of params) {
      const eq = param.indexOf('=');
      if (eq < 0) continue;
      const key = param.slice(0, eq).trim().toLowerCase();
      const value = param
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (key === 'api-version') out.version = value;
      else if (key === 'q') out.q = Number(value);
    }
    return out;
  });
}

export function isWellFormedVersion(version: string): boolean {
  return VERSION_SHAPE.test(version);
}

/** The Accept header a client sends for a media type and version. */
export function acceptHeader(mediaType: string, version: string | undefined): string {
  return version ? `${mediaType};api-version=${version}` : mediaType;
}

/** The media type of a stream format. */
export function streamMediaType(format: StreamFormat): string {
  return format === 'jsonl' ? MEDIA.jsonl : MEDIA.jsonSeq;
}
