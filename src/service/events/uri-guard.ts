/**
 * Server-side request forgery guard for webhook uris. A uri must be http(s) and every address
 * its host resolves to must be public; loopback is allowed when `allowLoopback` (this service
 * runs on loopback), private networks when `allowPrivate`. Link-local, cloud metadata,
 * unspecified, multicast and reserved addresses are refused always, in every spelling
 * (IPv4-mapped and NAT64 IPv6 forms, decimal IPv4 via the URL parser). Teredo and local-use
 * NAT64 addresses are refused always as well: they lead to an IPv4 address that is not checked.
 *
 * The check runs at registration and again at every delivery, and the delivery's own socket
 * connects through `guardedLookup`, so a name that resolves to a public address at registration
 * and to 169.254.169.254 later (DNS rebinding) is refused when it matters: at connect time.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { HttpProblem } from '../http/problem.js';

export interface UriPolicy {
  allowPrivate: boolean;
  allowLoopback: boolean;
  /** Resolver (tests inject one); default: the system resolver, all addresses. */
  resolve?: (host: string) => Promise<LookupAddress[]>;
}

export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'reserved'
  | 'tunnel';

/** Host names of cloud metadata services, refused whatever they resolve to. */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

const refused = (uri: string, why: string) =>
  new HttpProblem(
    422,
    'WEBHOOK_URI_REFUSED',
    `webhook uri refused: ${why}; expected an http(s) uri of a publicly reachable host, got "${uri}"`,
    {
      errors: [{ field: 'uri', message: 'WEBHOOK_URI_REFUSED' }],
    },
  );

/**
 * Checks a webhook uri and returns it parsed, or throws 422 WEBHOOK_URI_REFUSED saying why.
 * @example await checkWebhookUri('http://169.254.169.254/latest', { allowPrivate: false, allowLoopback: true })
 *   // throws: webhook uri refused: 169.254.169.254 is a cloud metadata address; …
 */
export async function checkWebhookUri(uri: string, policy: UriPolicy): Promise<URL> {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw refused(uri, 'not an absolute uri');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refused(uri, `scheme ${url.protocol.slice(0, -1)} is not http or https`);
  if (url.username || url.password)
    throw refused(uri, 'credentials in the uri are not allowed (the X-Event-Token header authenticates deliveries)');
  const host = hostOf(url);
  if (METADATA_HOSTS.has(host)) throw refused(uri, `${host} is a cloud metadata host`);
  const literal = isIP(host) !== 0;
  let addresses: LookupAddress[];
  try {
    addresses = literal ? [{ address: host, family: isIP(host) }] : await (policy.resolve ?? resolveAll)(host);
  } catch (err) {
    throw refused(uri, `host ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (addresses.length === 0) throw refused(uri, `host ${host} does not resolve`);
  for (const { address } of addresses) {
    const why = addressRefusal(address, policy);
    if (why) throw refused(uri, literal ? `${address} ${why}` : `${host} resolves to ${address}, which ${why}`);
  }
  return url;
}

/** The host of a URL without IPv6 brackets and without a trailing dot, lower-cased. */
export function hostOf(url: URL): string {
  return url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
}

/** Why an address may not receive webhooks under `policy`, or undefined when it may. */
export function addressRefusal(address: string, policy: UriPolicy): string | undefined {
  const kind = classifyAddress(address);
  switch (kind) {
    case 'public':
      return undefined;
    case 'loopback':
      return policy.allowLoopback ? undefined : 'is a loopback address (allowLoopbackWebhooks is off)';
    case 'private':
      return policy.allowPrivate ? undefined : 'is on a private network (allowPrivateWebhooks is off)';
    case 'metadata':
      return 'is a cloud metadata address';
    case 'tunnel':
      return 'is a Teredo (2001::/32) or local-use NAT64 (64:ff9b:1::/48) address, refused whatever IPv4 address it leads to';
    default:
      return `is ${/^[aeiu]/.test(kind) ? 'an' : 'a'} ${kind} address`;
  }
}

/**
 * What kind of address this is, for IPv4 and IPv6 (IPv4 embedded in IPv6 is judged as IPv4).
 * @example classifyAddress('::ffff:a9fe:a9fe') // 'metadata'
 */
export function classifyAddress(address: string): AddressClass {
  const ip = address.replace(/%.*$/, ''); // zone id of a link-local address
  if (isIP(ip) === 4) return classifyV4(v4ToInt(ip));
  if (isIP(ip) !== 6) return 'reserved';
  const h = expandV6(ip);
  const embedded = (hi: number, lo: number) => classifyV4(((hi << 16) | lo) >>> 0);
  const zeros = (n: number) => h.slice(0, n).every((x) => x === 0);
  if (zeros(8)) return 'unspecified';
  if (zeros(7) && h[7] === 1) return 'loopback';
  if (zeros(5) && h[5] === 0xffff) return embedded(h[6]!, h[7]!); // ::ffff:a.b.c.d
  if (zeros(6)) return embedded(h[6]!, h[7]!); // ::a.b.c.d (deprecated IPv4-compatible)
  if (h[0] === 0x64 && h[1] === 0xff9b && h.slice(2, 6).every((x) => x === 0)) return embedded(h[6]!, h[7]!); // NAT64
  if (h[0] === 0x2002) return embedded(h[1]!, h[2]!); // 6to4
  // Teredo 2001::/32 and local-use NAT64 64:ff9b:1::/48 are refused as whole ranges, not
  // decoded. A Teredo address carries two IPv4 addresses (the server's, and the client's
  // inverted), and the packets go through whatever relay the network has, so judging one
  // embedded address would not say where the request goes. In a local-use NAT64 address the
  // IPv4 address sits where the operator's prefix length puts it (RFC 6052: /48 to /96), so it
  // cannot be read reliably. No webhook receiver needs either.
  if (h[0] === 0x2001 && h[1] === 0) return 'tunnel';
  if (h[0] === 0x64 && h[1] === 0xff9b && h[2] === 1) return 'tunnel';
  if (h[0] === 0xfd00 && h[1] === 0x0ec2 && h.slice(2, 7).every((x) => x === 0) && h[7] === 0x254) return 'metadata';
  if ((h[0]! & 0xffc0) === 0xfe80) return 'link-local';
  if ((h[0]! & 0xfe00) === 0xfc00) return 'private';
  if ((h[0]! & 0xff00) === 0xff00) return 'multicast';
  if (h[0] === 0x2001 && h[1] === 0x0db8) return 'reserved'; // documentation
  if (h[0] === 0x0100 && zeros(4)) return 'reserved'; // discard prefix 100::/64
  return 'public';
}

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, part) => ((acc << 8) | Number(part)) >>> 0, 0);
}

const V4_RANGES: Array<[string, number, AddressClass]> = [
  ['169.254.169.254', 32, 'metadata'],
  ['0.0.0.0', 8, 'unspecified'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['10.0.0.0', 8, 'private'],
  ['172.16.0.0', 12, 'private'],
  ['192.168.0.0', 16, 'private'],
  ['100.64.0.0', 10, 'private'], // carrier-grade NAT
  ['198.18.0.0', 15, 'private'], // benchmarking networks
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // includes 255.255.255.255
];
const V4_MASKED = V4_RANGES.map(([net, bits, kind]) => {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { net: (v4ToInt(net) & mask) >>> 0, mask, kind };
});

function classifyV4(n: number): AddressClass {
  for (const r of V4_MASKED) if ((n & r.mask) >>> 0 === r.net) return r.kind;
  return 'public';
}

/** The eight 16-bit groups of an IPv6 address (with a dotted IPv4 tail converted). */
function expandV6(ip: string): number[] {
  let text = ip.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = v4ToInt(dotted[1]!);
    text = text.slice(0, -dotted[1]!.length) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const a = head ? head.split(':') : [];
  const b = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const groups = tail === undefined ? a : [...a, ...Array<string>(8 - a.length - b.length).fill('0'), ...b];
  return groups.map((g) => parseInt(g, 16) || 0);
}

function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, addrs) => (err ? reject(err) : resolve(addrs))),
  );
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for sockets (net.connect / undici `connect.lookup`) that refuses, at connect
 * time, every address the policy refuses: the last word against DNS rebinding.
 * @example new Agent({ connect: { lookup: guardedLookup(policy) } })
 */
export function guardedLookup(policy: UriPolicy) {
  return (hostname: string, options: LookupOptions | LookupOneOptions | LookupAllOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      for (const { address } of addresses) {
        const why = addressRefusal(address, policy);
        if (why) {
          const e = new Error(`webhook host ${hostname} resolves to ${address}, which ${why}`) as NodeJS.ErrnoException;
          e.code = 'WEBHOOK_URI_REFUSED';
          return callback(e, '');
        }
      }
      if ((options as LookupAllOptions).all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}
