import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { call, DEMO, getToken, OTHER, startTestService, type TestService } from '../support/service.js';
import {
  CASES_DIR,
  createMessage,
  createProcess,
  hostile,
  LODGING,
  messagePath,
  PARTIES,
  rawUpload,
  sample,
  upload,
} from './lodging-support.js';

let svc: TestService;
let token: string;
let pid: string;
let mid: string;

beforeAll(async () => {
  svc = await startTestService();
  token = await getToken(svc.url);
  pid = await createProcess(svc.url, token);
  mid = await createMessage(svc.url, token, pid);
});
afterAll(async () => svc?.dispose());

const errorsOf = (body: any) => body.errors.map((e: { field: string; message: string }) => [e.field, e.message]);

describe('message creation refusals', () => {
  it('refuses a message id that is not a UUID with 400', async () => {
    const res = await call(svc.url, token, 'PUT', messagePath(pid, 'message-1'), {
      headers: LODGING,
      body: { messageType: 'CleanOrder', ...PARTIES },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'INVALID_REQUEST',
      detail: 'message reference id "message-1" is not a UUID; the client chooses a UUID per message',
    });
  });

  it('answers 404 for a process that does not exist, or belongs to another tenant or white label', async () => {
    const otherTenant = await getToken(svc.url, OTHER);
    const otherLabel = await getToken(svc.url, { ...DEMO, label: 'demo-label-2' });
    const cases: Array<[string, string]> = [
      [token, messagePath(randomUUID(), randomUUID())],
      [otherTenant, messagePath(pid, randomUUID())],
      [otherLabel, messagePath(pid, randomUUID())],
      [otherLabel, messagePath(pid, mid)],
    ];
    for (const [t, path] of cases) {
      const res = await call(svc.url, t, 'PUT', path, { headers: LODGING, body: { messageType: 'CleanOrder', ...PARTIES } });
      expect([path, res.status, res.body.code]).toEqual([path, 404, 'NOT_FOUND']);
    }
    const get = await call(svc.url, otherLabel, 'GET', messagePath(pid, mid), { headers: LODGING });
    expect(get.status).toBe(404);
    const send = await call(svc.url, otherTenant, 'PUT', `${messagePath(pid, mid)}/send`, { headers: LODGING });
    expect(send.status).toBe(404);
    const up = await upload(svc.url, otherLabel, pid, mid, 'x.pdf', sample('EmployerStatement.pdf'), 'application/pdf');
    expect(up.status).toBe(404);
  });

  it('refuses a messageType other than the code of the process definition with 422 MESSAGE_TYPE_MISMATCH', async () => {
    const res = await call(svc.url, token, 'PUT', messagePath(pid, randomUUID()), {
      headers: LODGING,
      body: { messageType: 'ChangeOrder', ...PARTIES },
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      code: 'MESSAGE_TYPE_MISMATCH',
      detail: 'messageType "ChangeOrder" is not the message type of this process; its definition CleanOrder takes messageType "CleanOrder"',
      errors: [{ field: 'messageType', message: 'MESSAGE_TYPE_MISMATCH' }],
    });
  });

  it('refuses a body without stakeholder and with a sender lacking its type, naming the fields', async () => {
    const res = await call(svc.url, token, 'PUT', messagePath(pid, randomUUID()), {
      headers: LODGING,
      body: { messageType: 'CleanOrder', recipient: PARTIES.recipient, sender: { id: 'x' } },
    });
    expect(res.status).toBe(400);
    expect(errorsOf(res.body)).toEqual([
      ['stakeholder', 'MISSING_REQUIRED_FIELD'],
      ['sender.type', 'MISSING_REQUIRED_FIELD'],
    ]);
  });

  it('answers 404 for sending or uploading to a message that was never created', async () => {
    const other = randomUUID();
    expect((await call(svc.url, token, 'PUT', `${messagePath(pid, other)}/send`, { headers: LODGING })).status).toBe(404);
    expect((await upload(svc.url, token, pid, other, 'x.pdf', sample('EmployerStatement.pdf'), 'application/pdf')).status).toBe(404);
  });
});

describe('attachment name refusals', () => {
  const names = readFileSync(join(CASES_DIR, 'path-trick-names.txt'), 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'));

  it.each(names)('refuses %s with 400 ATTACHMENT_INVALID_NAME', async (encoded) => {
    const res = await rawUpload(svc.url, token, `${messagePath(pid, mid)}/attachments/${encoded}`);
    expect([res.status, res.body.code]).toEqual([400, 'ATTACHMENT_INVALID_NAME']);
  });

  it('says what is wrong with the name', async () => {
    const res = await rawUpload(svc.url, token, `${messagePath(pid, mid)}/attachments/..%2F..%2Fetc%2Fpasswd`);
    expect(res.body).toMatchObject({
      detail: 'attachment file name "../../etc/passwd" contains a path separator "/"',
      errors: [{ field: 'file-name', message: 'ATTACHMENT_INVALID_NAME' }],
    });
    const double = await rawUpload(svc.url, token, `${messagePath(pid, mid)}/attachments/%252e%252e%252fpasswd.xml`);
    expect(double.body.detail).toBe(
      'attachment file name "%2e%2e%2fpasswd.xml" still contains a percent-encoded sequence after decoding (double encoding)',
    );
    const nul = await rawUpload(svc.url, token, `${messagePath(pid, mid)}/attachments/report%00.pdf`);
    expect(nul.body.detail).toBe('attachment file name "report\\u0000.pdf" contains a NUL character');
    const caseVariant = await rawUpload(svc.url, token, `${messagePath(pid, mid)}/attachments/cleanordercounterparties.xml`);
    expect(caseVariant.body.detail).toBe(
      'attachment file name "cleanordercounterparties.xml" differs from the well-known name CleanOrderCounterparties.xml only in case; well-known names are case-sensitive',
    );
  });

  it('accepts a long, unusual but harmless name', async () => {
    const name = `Werkgeversverklaring (${'x'.repeat(150)}) – 2026.pdf`;
    expect((await upload(svc.url, token, pid, mid, name, sample('EmployerStatement.pdf'), 'application/pdf')).status).toBe(204);
  });
});

describe('attachment type refusals', () => {
  it('refuses a PNG uploaded as application/pdf with 415 ATTACHMENT_MIME_MISMATCH', async () => {
    const res = await upload(svc.url, token, pid, mid, 'statement.pdf', hostile('image-named-as.pdf'), 'application/pdf');
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({
      code: 'ATTACHMENT_MIME_MISMATCH',
      detail: 'statement.pdf: mimeType application/pdf does not match the content: expected PDF, got PNG image',
    });
  });

  it('refuses XML declared as a PDF, and a PDF declared as XML', async () => {
    const xmlAsPdf = await upload(svc.url, token, pid, mid, 'CleanOrderCovers.xml', sample('CleanOrderCovers.xml'), 'application/pdf');
    expect([xmlAsPdf.status, xmlAsPdf.body.code]).toEqual([415, 'ATTACHMENT_MIME_MISMATCH']);
    const pdfAsXml = await upload(svc.url, token, pid, mid, 'CleanOrderCovers.xml', sample('EmployerStatement.pdf'), 'application/xml');
    expect(pdfAsXml.body).toMatchObject({
      code: 'ATTACHMENT_MIME_MISMATCH',
      detail: 'CleanOrderCovers.xml: mimeType application/xml does not match the content: expected XML, got PDF',
    });
  });

  it('refuses an extension that does not fit the declared type', async () => {
    const res = await upload(svc.url, token, pid, mid, 'photo.pdf', hostile('image-named-as.pdf'), 'image/png');
    expect(res.body).toMatchObject({
      code: 'ATTACHMENT_MIME_MISMATCH',
      detail: 'photo.pdf: the extension .pdf does not fit mimeType image/png; expected .png',
    });
  });

  it('refuses a type it does not accept with 415 UNSUPPORTED_MEDIA_TYPE listing the accepted ones', async () => {
    const res = await upload(svc.url, token, pid, mid, 'setup.exe', Buffer.from('MZ\x90\x00'), 'application/x-msdownload');
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(res.body.detail).toMatch(
      /^mimeType "application\/x-msdownload" is not accepted for attachments; accepted: application\/xml, text\/xml, application\/pdf, image\/png/,
    );
  });

  it('refuses binary content declared as plain text', async () => {
    const res = await upload(svc.url, token, pid, mid, 'notes.txt', Buffer.from([0x68, 0x69, 0x00, 0xff, 0xfe]), 'text/plain');
    expect(res.body).toMatchObject({
      code: 'ATTACHMENT_MIME_MISMATCH',
      detail: 'notes.txt: mimeType text/plain does not match the content: expected plain text, got unrecognised binary content',
    });
  });
});

describe('XML attachment refusals', () => {
  const put = (name: string, file: string) => upload(svc.url, token, pid, mid, name, hostile(file), 'application/xml');

  it('refuses an external entity to /etc/passwd before parsing, naming the line', async () => {
    const res = await put('CleanOrderCounterparties.xml', 'xxe-passwd.xml');
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      code: 'ATTACHMENT_FORBIDDEN_DTD',
      detail:
        'CleanOrderCounterparties.xml: line 2: a <!DOCTYPE declaration is not allowed; XML attachments must not contain a DOCTYPE, DTD or entity declarations',
      errors: [{ field: 'DOCTYPE', message: 'line 2: DTD and entity declarations are not allowed' }],
    });
    expect(JSON.stringify(res.body)).not.toContain('root:');
  });

  it('refuses billion laughs and an external DTD, also under a supporting name', async () => {
    for (const [name, file] of [
      ['AnsweredQuestionnaire.xml', 'billion-laughs.xml'],
      ['extra.xml', 'billion-laughs.xml'],
      ['CleanOrderCovers.xml', 'external-dtd.xml'],
    ] as const) {
      const res = await put(name, file);
      expect([name, file, res.status, res.body.code]).toEqual([name, file, 422, 'ATTACHMENT_FORBIDDEN_DTD']);
    }
  });

  it('refuses malformed XML with 422 ATTACHMENT_MALFORMED_XML and the line', async () => {
    const res = await put('CleanOrderCounterparties.xml', 'malformed.xml');
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      code: 'ATTACHMENT_MALFORMED_XML',
      detail: 'CleanOrderCounterparties.xml is not well-formed XML: line 5: Opening and ending tag mismatch: Surname line 5 and Name',
    });
    const supporting = await put('notes.xml', 'malformed.xml');
    expect(supporting.body.code).toBe('ATTACHMENT_MALFORMED_XML');
  });

  it('refuses an unknown element with 422 ATTACHMENT_SCHEMA_VIOLATION naming line and element', async () => {
    const res = await put('CleanOrderCounterparties.xml', 'wrong-element.xml');
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('ATTACHMENT_SCHEMA_VIOLATION');
    expect(res.body.errors).toEqual([
      {
        field: 'Persoon',
        message: "line 3: Element 'Persoon': This element is not expected. Expected is one of ( Person, Organisation ).",
      },
    ]);
  });

  it('refuses a missing required element, naming where it was expected', async () => {
    const res = await put('CleanOrderCounterparties.xml', 'missing-surname.xml');
    expect(res.body.errors).toEqual([
      {
        field: 'DateOfBirth',
        message: "line 6: Element 'DateOfBirth': This element is not expected. Expected is one of ( SurnamePrefix, Surname ).",
      },
    ]);
  });

  it('refuses a date that does not exist', async () => {
    const res = await put('CleanOrderCounterparties.xml', 'bad-date-of-birth.xml');
    expect(res.body.errors).toEqual([
      {
        field: 'DateOfBirth',
        message: "line 6: Element 'DateOfBirth': '1986-02-30' is not a valid value of the atomic type 'DateOfBirth'.",
      },
    ]);
  });

  it('refuses a relation to a counterparty that is not in the file', async () => {
    const res = await put('CleanOrderCounterparties.xml', 'relation-to-unknown-id.xml');
    expect(res.body.code).toBe('ATTACHMENT_SCHEMA_VIOLATION');
    expect(res.body.errors).toEqual([
      { field: 'Relation', message: "line 11: Element 'Relation': No match found for key-sequence ['P9'] of keyref 'relationTarget'." },
    ]);
  });

  it('lists every violation of a document: three decimals and a currency that is not ISO 4217', async () => {
    const res = await put('CleanOrderCollaterals.xml', 'amount-three-decimals.xml');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['MarketValue/@currency', 'MarketValue']);
    expect(res.body.detail).toMatch(
      /^CleanOrderCollaterals\.xml does not comply with the schema CleanOrderCollaterals\.xsd: 2 errors, the first: MarketValue\/@currency: line 6: /,
    );
  });

  it('stores nothing that was refused', async () => {
    const message = await call(svc.url, token, 'GET', messagePath(pid, mid), { headers: LODGING });
    expect(message.body.attachments.map((a: { fileName: string }) => a.fileName)).toEqual([
      `Werkgeversverklaring (${'x'.repeat(150)}) – 2026.pdf`,
    ]);
  });
});

describe('multipart refusals', () => {
  it('refuses an attachment over 10 MiB with 413 ATTACHMENT_TOO_LARGE', async () => {
    const big = Buffer.alloc(10 * 1024 * 1024 + 1, 0x20);
    big.write('%PDF-1.4\n');
    const res = await upload(svc.url, token, pid, mid, 'big.pdf', big, 'application/pdf');
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({
      code: 'ATTACHMENT_TOO_LARGE',
      detail: 'the attachment exceeds 10485760 bytes (10 MiB), the largest the service accepts',
    });
  });

  it('refuses two files in one request with 413 TOO_MANY_PARTS', async () => {
    const pdf = new Blob([new Uint8Array(sample('EmployerStatement.pdf'))]);
    const res = await upload(svc.url, token, pid, mid, 'a.pdf', '', '', (form) => {
      form.append('mimeType', 'application/pdf');
      form.append('content', pdf, 'a.pdf');
      form.append('content', pdf, 'b.pdf');
    });
    expect([res.status, res.body.code]).toEqual([413, 'TOO_MANY_PARTS']);
  });

  it('refuses many fields with 413 TOO_MANY_PARTS', async () => {
    const res = await upload(svc.url, token, pid, mid, 'a.pdf', '', '', (form) => {
      for (let i = 0; i < 10; i++) form.append(`field${i}`, 'x');
    });
    expect([res.status, res.body.code]).toEqual([413, 'TOO_MANY_PARTS']);
  });

  it('refuses an upload without mimeType, naming the field', async () => {
    const res = await upload(svc.url, token, pid, mid, 'a.pdf', '', '', (form) =>
      form.append('content', new Blob([new Uint8Array(sample('EmployerStatement.pdf'))]), 'a.pdf'),
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_REQUEST', errors: [{ field: 'mimeType', message: 'MISSING_REQUIRED_FIELD' }] });
  });

  it('refuses a body that is not multipart with 415', async () => {
    const res = await call(svc.url, token, 'PUT', `${messagePath(pid, mid)}/attachments/a.pdf`, {
      headers: LODGING,
      body: { content: 'x', mimeType: 'application/pdf' },
    });
    expect([res.status, res.body.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
  });

  it('refuses a 51st attachment name with 409 TOO_MANY_ATTACHMENTS, and still replaces an existing one', async () => {
    const m = await createMessage(svc.url, token, pid);
    for (let i = 1; i <= 50; i++) {
      const res = await upload(svc.url, token, pid, m, `note-${i}.txt`, `note ${i}\n`, 'text/plain');
      expect(res.status).toBe(204);
    }
    const res = await upload(svc.url, token, pid, m, 'note-51.txt', 'one too many\n', 'text/plain');
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'TOO_MANY_ATTACHMENTS' });
    expect((await upload(svc.url, token, pid, m, 'note-7.txt', 'seven, again\n', 'text/plain')).status).toBe(204);
  });
});
