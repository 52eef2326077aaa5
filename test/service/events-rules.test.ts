import { describe, expect, it } from 'vitest';
import { checkWebhookUri, classifyAddress, guardedLookup } from '../../src/service/events/uri-guard.js';
import { judgeStatus, parseRetryAfter, retryDelayMs } from '../../src/service/events/dispatcher.js';

const strict = { allowPrivate: false, allowLoopback: false };

describe('webhook address classes', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['127.0.0.2', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['64:ff9b::169.254.169.254', 'metadata'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['10.1.2.3', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.0.1', 'private'],
    ['100.127.0.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['239.1.1.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2606:4700::1111', 'public'],
    // Teredo 2001::/32: refused as a range, whatever IPv4 it carries (here 192.0.2.45, the RFC 4380 example)
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'tunnel'],
    ['2001:0:4136:e378:8000:63bf:5601:5601', 'tunnel'], // client 169.254.169.254, inverted
    ['2001:0:a9fe:a9fe::', 'tunnel'], // server 169.254.169.254
    ['2001::', 'tunnel'],
    ['2001:0:ffff:ffff:ffff:ffff:ffff:ffff', 'tunnel'],
    ['2001:1::1', 'public'], // just past 2001::/32
    ['2001:4860:4860::8888', 'public'],
    // local-use NAT64 64:ff9b:1::/48, IPv4 at the /96 and the /48 places
    ['64:ff9b:1::a9fe:a9fe', 'tunnel'],
    ['64:ff9b:1::8.8.8.8', 'tunnel'],
    ['64:ff9b:1:a9fe:a9:fe00::', 'tunnel'],
    ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'tunnel'],
    ['64:ff9b::8.8.8.8', 'public'], // the well-known NAT64 prefix is still judged by its IPv4
    ['64:ff9b:2::1', 'public'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });
});

describe('webhook uri check', () => {
  it('refuses a host name that resolves to a link-local address', async () => {
    const resolve = async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '169.254.10.10', family: 4 },
    ];
    await expect(checkWebhookUri('https://hooks.example.test/x', { ...strict, resolve })).rejects.toThrow(
      'webhook uri refused: hooks.example.test resolves to 169.254.10.10, which is a link-local address; expected an http(s) uri of a publicly reachable host, got "https://hooks.example.test/x"',
    );
  });

  it('accepts a host name whose every address is public', async () => {
    const resolve = async () => [{ address: '93.184.215.14', family: 4 }];
    expect((await checkWebhookUri('https://hooks.example.test/x', { ...strict, resolve })).href).toBe('https://hooks.example.test/x');
  });

  it('refuses a host name that does not resolve', async () => {
    const resolve = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    await expect(checkWebhookUri('https://nowhere.test/', { ...strict, resolve })).rejects.toThrow(
      'host nowhere.test does not resolve (ENOTFOUND)',
    );
  });

  it('refuses at connect time what the policy refuses (DNS rebinding)', async () => {
    const lookup = guardedLookup(strict);
    const err = await new Promise<NodeJS.ErrnoException | null>((r) => lookup('localhost', {}, (e) => r(e)));
    expect(err?.code).toBe('WEBHOOK_URI_REFUSED');
    expect(err?.message).toMatch(
      /^webhook host localhost resolves to (127\.0\.0\.1|::1), which is a loopback address \(allowLoopbackWebhooks is off\)$/,
    );
    const ok = await new Promise<unknown>((r) =>
      guardedLookup({ allowPrivate: false, allowLoopback: true })('localhost', { all: true }, (e, a) => r(e ?? a)),
    );
    expect(Array.isArray(ok)).toBe(true);
  });
});

describe('webhook retry rules', () => {
  const policy = { baseMs: 500, capMs: 300_000, maxAttempts: 10 };
  it('draws the delay uniformly below an exponential bound with a cap', () => {
    expect(retryDelayMs(1, policy, undefined, () => 0.999)).toBe(499);
    expect(retryDelayMs(3, policy, undefined, () => 0.5)).toBe(1000);
    expect(retryDelayMs(30, policy, undefined, () => 0.5)).toBe(150_000);
    expect(retryDelayMs(3, policy, undefined, () => 0)).toBe(0);
  });

  it('waits at least Retry-After, but never past the cap', () => {
    expect(retryDelayMs(1, policy, 7000, () => 0.5)).toBe(7000);
    expect(retryDelayMs(1, policy, 10_000_000, () => 0.5)).toBe(300_000);
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });

  it.each([
    [200, 'delivered'],
    [204, 'delivered'],
    [301, 'retry'],
    [302, 'retry'],
    [400, 'failed'],
    [401, 'failed'],
    [404, 'failed'],
    [408, 'retry'],
    [429, 'retry'],
    [500, 'retry'],
    [503, 'retry'],
  ])('status %i ends an attempt as %s', (status, outcome) => {
    expect(judgeStatus(status)).toBe(outcome);
  });
});
