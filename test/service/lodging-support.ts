/**
 * Helpers of the lodging and process service tests: create a process and a message, upload an
 * attachment as multipart/form-data (fetch's FormData) or with a raw path (node:http, which does
 * not normalise `..` the way fetch does), wait for background handling, read the event outbox.
 */
import { request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { WELL_KNOWN_ATTACHMENTS } from '../../src/contract/process.js';
import { definitionReferenceId } from '../../src/service/process/definitions.js';
import { call } from '../support/service.js';

export const PO = { accept: 'application/json;api-version=2026.1.0' };
export const LODGING = { accept: 'application/json;api-version=2022.1.0' };

export const SAMPLES_DIR = join(import.meta.dirname, '../../samples/lodging');
export const CASES_DIR = join(import.meta.dirname, '../cases/lodging');
export const sample = (name: string) => readFileSync(join(SAMPLES_DIR, name));
export const hostile = (name: string) => readFileSync(join(CASES_DIR, name));

export const PARTIES = {
  stakeholder: { id: '68750110', type: 'Kvk' },
  recipient: { id: 'demo-broker', type: 'broker' },
  sender: { id: 'demo-broker', type: 'broker' },
};

export async function createProcess(
  url: string,
  token: string,
  code = 'CleanOrder',
  externalReferences = [{ origin: 'crm', referenceId: 'A-1' }],
): Promise<string> {
  const res = await call(url, token, 'POST', '/process-orchestration/processes', {
    headers: PO,
    body: { processDefinitionReferenceId: definitionReferenceId(code), externalReferences },
  });
  if (res.status !== 201) throw new Error(`process creation failed: ${res.status} ${res.text}`);
  return res.body.referenceId as string;
}

export const messagePath = (pid: string, mid: string) => `/lodging/processes/${pid}/messages/${mid}`;

export async function createMessage(url: string, token: string, pid: string, mid = randomUUID()): Promise<string> {
  const res = await call(url, token, 'PUT', messagePath(pid, mid), { headers: LODGING, body: { messageType: 'CleanOrder', ...PARTIES } });
  if (res.status !== 201) throw new Error(`message creation failed: ${res.status} ${res.text}`);
  return mid;
}

/** Uploads one attachment; `parts` replaces the default form (content + mimeType) when given. */
export async function upload(
  url: string,
  token: string,
  pid: string,
  mid: string,
  fileName: string,
  content: Buffer | string,
  mimeType: string,
  parts?: (form: FormData) => void,
): Promise<{ status: number; body: any }> {
  const form = new FormData();
  if (parts) parts(form);
  else {
    form.append('content', new Blob([typeof content === 'string' ? Buffer.from(content) : new Uint8Array(content)]), fileName);
    form.append('mimeType', mimeType);
  }
  const res = await fetch(`${url}${messagePath(pid, mid)}/attachments/${encodeURIComponent(fileName)}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, ...LODGING },
    body: form,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** A PUT with the path sent exactly as given (no URL normalisation) and a small multipart body. */
export function rawUpload(url: string, token: string, rawPath: string): Promise<{ status: number; body: any }> {
  const boundary = 'stagecoach-boundary';
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="mimeType"\r\n\r\napplication/pdf\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="content"; filename="x.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n%%EOF\n\r\n--${boundary}--\r\n`,
  );
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        hostname,
        port,
        method: 'PUT',
        path: rawPath,
        headers: {
          authorization: `Bearer ${token}`,
          ...LODGING,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': body.length,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Uploads the seven samples and the supporting PDF. */
export async function uploadSamples(
  url: string,
  token: string,
  pid: string,
  mid: string,
  names: readonly string[] = [...WELL_KNOWN_ATTACHMENTS, 'EmployerStatement.pdf'],
): Promise<void> {
  for (const name of names) {
    const res = await upload(url, token, pid, mid, name, sample(name), name.endsWith('.pdf') ? 'application/pdf' : 'application/xml');
    if (res.status !== 204) throw new Error(`upload of ${name} failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
}

/** Polls GET message until handling is no longer Pending (handling runs in the background). */
export async function waitForHandling(url: string, token: string, pid: string, mid: string): Promise<any> {
  for (let attempt = 0; attempt < 400; attempt++) {
    const res = await call(url, token, 'GET', messagePath(pid, mid), { headers: LODGING });
    if (res.body?.handling && res.body.handling.status !== 'Pending') return res.body;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`message ${mid} was not handled`);
}

export interface OutboxEvent {
  eventName: string;
  brokerKey: string;
  label: string | null;
  group: string;
  data: Record<string, any>;
}

/** Events in the outbox, oldest first, optionally only those about one process. */
export function outbox(dataDir: string, processId?: string): OutboxEvent[] {
  const db = new Database(join(dataDir, 'service.db'), { readonly: true });
  try {
    const rows = db.prepare('SELECT event_name, broker_key, label_id, group_name, payload FROM event_outbox ORDER BY seq').all() as Array<
      Record<string, string>
    >;
    return rows
      .map((r) => ({
        eventName: r.event_name!,
        brokerKey: r.broker_key!,
        label: r.label_id ?? null,
        group: r.group_name!,
        data: JSON.parse(r.payload!),
      }))
      .filter((e) => processId === undefined || e.data.processReferenceId === processId);
  } finally {
    db.close();
  }
}
