/**
 * Test support: a real embedded service on a free loopback port with its own temporary data
 * folder, and a few raw HTTP helpers that do not go through the stagecoach client (service tests
 * must not depend on the client).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, type RunningService, type ServiceOptions } from '../../src/service/index.js';

export interface TestService extends RunningService {
  /** Stops the service and removes its data folder. */
  dispose(): Promise<void>;
}

export function tempDir(prefix = 'stagecoach-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startTestService(options: ServiceOptions = {}): Promise<TestService> {
  const dataDir = options.dataDir ?? tempDir('stagecoach-svc-');
  const service = await startService({ logLevel: 'silent', ...options, port: options.port ?? 0, dataDir });
  return {
    ...service,
    async dispose() {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const DEMO = { clientId: 'demo-client', secret: 'demo-secret', broker: 'demo-broker', label: 'demo-label' } as const;
export const SCOPED = { clientId: 'scoped-client', secret: 'scoped-secret', broker: 'demo-broker', label: 'demo-label' } as const;
export const OTHER = { clientId: 'other-client', secret: 'other-secret', broker: 'other-broker', label: 'other-label' } as const;

export function basic(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;
}

/** Gets an access token over HTTP with the given identity (demo identity by default). */
export async function getToken(
  baseUrl: string,
  who: { clientId: string; secret: string; broker: string; label: string } = DEMO,
): Promise<string> {
  const res = await fetch(`${baseUrl}/authentication/token/${who.broker}/${who.label}`, {
    headers: { authorization: basic(who.clientId, who.secret) },
  });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { access_token: string };
  return body.access_token;
}

type RequestBody = NonNullable<RequestInit['body']>;

/** A raw authenticated request; returns status, headers and the parsed (or raw) body. */
export async function call(
  baseUrl: string,
  token: string | undefined,
  method: string,
  path: string,
  init: { body?: unknown; headers?: Record<string, string>; raw?: RequestBody } = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (token) headers.authorization = `Bearer ${token}`;
  let body: RequestBody | undefined = init.raw;
  if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body,
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON: leave the text */
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}
