/**
 * Content negotiation of the spec: the media type and `api-version` in Accept. A version that
 * is malformed or not served by the route's group is refused with 400; an Accept naming no media
 * type the route produces gets 406. An omitted version means the newest of the group (our choice,
 * docs/contract-gaps.md).
 */
import { API_VERSIONS, isWellFormedVersion, parseAccept, type VersionedArea } from '../../contract/media.js';
import { HttpProblem } from './problem.js';

export interface Negotiated {
  mediaType: string;
  version: string;
}

export interface NegotiateOptions {
  area: VersionedArea;
  produces: readonly string[];
  /** Streams need the format named explicitly: a missing or wildcard Accept is a 400. */
  requireExplicit?: boolean;
}

export function negotiate(acceptHeader: string | undefined, opts: NegotiateOptions): Negotiated {
  const versions: readonly string[] = API_VERSIONS[opts.area];
  const ranges = parseAccept(acceptHeader).filter((r) => r.q > 0);
  const latest = versions[0]!;
  if (ranges.length === 0) {
    if (opts.requireExplicit) throw new HttpProblem(400, 'NOT_ACCEPTABLE', `Accept must name one of ${opts.produces.join(', ')}`);
    return { mediaType: opts.produces[0]!, version: latest };
  }
  // Highest q first; a specific type beats a wildcard at equal q.
  const ordered = [...ranges].sort((a, b) => b.q - a.q || wildness(a.type) - wildness(b.type));
  for (const range of ordered) {
    const match = opts.produces.find((p) => matches(range.type, p));
    if (!match) continue;
    if (opts.requireExplicit && range.type !== match) {
      throw new HttpProblem(400, 'NOT_ACCEPTABLE', `Accept must name the stream format explicitly: one of ${opts.produces.join(', ')}`);
    }
    if (range.version !== undefined) {
      if (!isWellFormedVersion(range.version)) {
        throw new HttpProblem(
          400,
          'UNSUPPORTED_API_VERSION',
          `api-version "${range.version}" is not of the form <year>.<number>.<number>; this API serves ${versions.join(', ')}`,
          { title: 'Bad request' },
        );
      }
      if (!versions.includes(range.version)) {
        throw new HttpProblem(
          400,
          'UNSUPPORTED_API_VERSION',
          `api-version ${range.version} is not served by /${opts.area === 'events' ? '…/events' : opts.area}; supported: ${versions.join(', ')}`,
          { title: 'Bad request' },
        );
      }
    }
    return { mediaType: match, version: range.version ?? latest };
  }
  throw new HttpProblem(406, 'NOT_ACCEPTABLE', `cannot produce ${acceptHeader}; this endpoint produces ${opts.produces.join(', ')}`);
}

function wildness(type: string): number {
  return type === '*/*' ? 2 : type.endsWith('/*') ? 1 : 0;
}

function matches(range: string, produced: string): boolean {
  if (range === '*/*') return true;
  if (range.endsWith('/*')) return produced.startsWith(range.slice(0, -1));
  return range === produced || (range === 'application/problem+json' && produced === 'application/json');
}
