/**
 * The real CLI (dist/) against a real embedded service: lodge, counterparties list and export
 * (continued after an interruption), webhooks subscribe/list/update/unsubscribe and listen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StagecoachClient } from '../../src/client/index.js';
import { runCli, startCli, ROOT } from '../support/cli.js';
import { tempDir, type TestService } from '../support/service.js';
import { startServiceWithClient, stopServiceWithClient } from '../support/client-fixture.js';

let svc: TestService;
let client: StagecoachClient;
let env: Record<string, string>;
let dir: string;

beforeAll(async () => {
  ({ svc, client, env, dir } = await startServiceWithClient());
});
afterAll(() => stopServiceWithClient({ svc, client }));

describe('stagecoach lodge', () => {
  it('lodges the sample folder: every file uploaded with its mimeType, message Sent', async () => {
    const r = await runCli(
      ['lodge', join(ROOT, 'samples/lodging'), '--external-ref', 'crm:A-17', '--stakeholder', 'Kvk:68750110', '--json'],
      { env },
    );
    expect(r, r.stderr).toMatchObject({ code: 0 });
    const report = JSON.parse(r.stdout);
    expect(report.message.status).toBe('Sent');
    expect(report.definition.code).toBe('CleanOrder');
    expect(report.uploaded.slice(0, 2).map((u: { fileName: string }) => u.fileName)).toEqual([
      'CleanOrderFinancingRequest.xml',
      'CleanOrderCounterparties.xml',
    ]);
    expect(report.uploaded.find((u: { fileName: string }) => u.fileName === 'EmployerStatement.pdf').mimeType).toBe('application/pdf');
    expect(report.message.attachments.length).toBe(report.uploaded.length);
    const process = await client.processes.get(report.processReferenceId);
    expect(process).toMatchObject({ externalReferences: [{ origin: 'crm', referenceId: 'A-17' }] });
  });
  it('exits 2 when a file has no known mimeType, before creating anything', async () => {
    const folder = tempDir('stagecoach-lodge-');
    writeFileSync(join(folder, 'CleanOrderFinancingRequest.xml'), '<x/>');
    writeFileSync(join(folder, 'notes.xyz'), 'x');
    const r = await runCli(['lodge', folder], { env });
    expect(r, r.stderr).toMatchObject({ code: 2 });
    expect(r.stderr).toBe(
      `stagecoach: ${folder}: no mimeType known for notes.xyz; expected one of the extensions .xml .pdf .png .jpg .jpeg .gif .tif .tiff .txt .csv .json .doc .docx .xls .xlsx .odt\n`,
    );
  });
});

describe('stagecoach counterparties', () => {
  it('lists a page as a table and as JSON', async () => {
    const r = await runCli(['counterparties', 'list', '--limit', '2'], { env });
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^seq {2}referenceId {27}type {4}name +country$/);
    expect(lines.at(-1)).toMatch(/^1–2 of \d+$/);
    const page = JSON.parse((await runCli(['counterparties', 'list', '--offset', '1', '--limit', '1', '--json'], { env })).stdout);
    expect([page.offset, page.limit, page.items.length]).toEqual([1, 1, 1]);
  });
  it('refuses a limit over 100 with exit 2', async () => {
    const r = await runCli(['counterparties', 'list', '--limit', '500'], { env });
    expect([r.code, r.stderr]).toEqual([2, 'stagecoach: --limit: expected a whole number from 1 to 100, got "500"\n']);
  });
  it('exports, and continues an export whose last record was cut short', async () => {
    const out = join(dir, 'cps.jsonl');
    const first = await runCli(['counterparties', 'export', '--format', 'jsonl', '--out', out], { env });
    expect(first, first.stderr).toMatchObject({ code: 0 });
    const whole = readFileSync(out);
    const count = whole.toString().trim().split('\n').length;
    expect(first.stdout).toBe(`exported ${count} counterparties to ${out} as jsonl; last sequenceNumber ${count}\n`);
    truncateSync(out, whole.length - 20);
    const again = await runCli(['counterparties', 'export', '--format', 'jsonl', '--out', out, '--json'], { env });
    expect(JSON.parse(again.stdout)).toMatchObject({ written: 1, resumedAfter: count - 1, lastSequenceNumber: count });
    expect(readFileSync(out).equals(whole)).toBe(true);
  });
});

describe('stagecoach webhooks', () => {
  it('subscribes, lists (tokens hidden unless asked), updates and unsubscribes', async () => {
    const sub = JSON.parse(
      (await runCli(['webhooks', 'subscribe', 'counterparty.merged', 'http://127.0.0.1:9/hook', '--json'], { env })).stdout,
    );
    expect(sub).toMatchObject({ eventName: 'counterparty.merged', uri: 'http://127.0.0.1:9/hook', token: expect.any(String) });
    const list = await runCli(['webhooks', 'list', '--event', 'counterparty.merged'], { env });
    expect(list.stdout).toContain(`counterparty.merged  ${sub.id}  http://127.0.0.1:9/hook`);
    expect(list.stdout).not.toContain(sub.token);
    expect((await runCli(['webhooks', 'list', '--show-tokens', '--event', 'counterparty.merged'], { env })).stdout).toContain(sub.token);
    const upd = await runCli(['webhooks', 'update', 'counterparty.merged', sub.id, 'http://127.0.0.1:9/v2'], { env });
    expect(upd.stdout).toBe(`registration ${sub.id} of counterparty.merged now delivers to http://127.0.0.1:9/v2\n`);
    const del = await runCli(['webhooks', 'unsubscribe', 'counterparty.merged', sub.id], { env });
    expect(del.stdout).toBe(`registration ${sub.id} of counterparty.merged deleted\n`);
    expect((await runCli(['webhooks', 'list', '--event', 'counterparty.merged'], { env })).stdout).toBe('no webhook registrations\n');
  });

  it('listens with --subscribe: receives a triggered event, then unsubscribes itself', async () => {
    const { child, firstLine } = await startCli(
      ['webhooks', 'listen', '--port', '0', '--subscribe', 'counterparty.merged', '--count', '1', '--json'],
      { env },
    );
    let rest = '';
    child.stdout!.on('data', (d) => (rest += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const hello = JSON.parse(firstLine);
    expect(hello.listening).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhooks$/);
    expect(hello.subscribed).toEqual([{ event: 'counterparty.merged', id: expect.any(String) }]);
    await client.events.trigger('counterparty.merged', { survivorReferenceId: 'S9', mergedReferenceIds: ['M9'] });
    expect(await exited).toBe(0);
    const event = JSON.parse(rest.trim());
    expect(event).toMatchObject({ eventName: 'counterparty.merged', data: { survivorReferenceId: 'S9', mergedReferenceIds: ['M9'] } });
    expect(await client.events.list('counterparty.merged')).toEqual([]);
  });

  it('refuses deliveries with a wrong token (401) when listening with --token', async () => {
    const { child, firstLine } = await startCli(['webhooks', 'listen', '--port', '0', '--token', 'right-token'], { env });
    const url = firstLine.replace(/^listening on /, '');
    const post = (token: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-event-token': token },
        body: JSON.stringify({ id: 'e1', eventName: 'counterparty.merged', occurredOn: '2025-01-01T00:00:00Z', data: {} }),
      });
    expect((await post('wrong-token')).status).toBe(401);
    expect((await post('right-token')).status).toBe(204);
    expect((await post('right-token')).status).toBe(204); // duplicate: dropped, still 204
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });

  it('exits 2 when listen has neither a token nor a subscription', async () => {
    const r = await runCli(['webhooks', 'listen', '--port', '0'], { env });
    expect([r.code, r.stderr]).toEqual([
      2,
      'stagecoach: webhooks listen: give --token <token> (or STAGECOACH_WEBHOOK_TOKEN) to verify deliveries, or --subscribe <event> to register this receiver and use its token\n',
    ]);
  });
});
