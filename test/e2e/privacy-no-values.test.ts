/**
 * What stagecoach prints, logs and reports carries no value of a personal field: a migration of
 * the sample export with recognisable values planted in rejected and staged rows, at the most
 * talkative log level, and none of those values may appear on stdout, stderr, in the pino log
 * or in the report files (default mode). `--reveal` writes them, and says so.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { ROOT, runCli } from '../support/cli.js';
import { startTestService, tempDir, type TestService } from '../support/service.js';

const services: TestService[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.dispose();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const COLUMNS =
  'klantnr;voorletters;voornamen;tussenvoegsel;achternaam;geslacht;geboortedatum;nationaliteit;straat;huisnummer;postcode;woonplaats;land;telefoon;email;inkomen;inkomen_frequentie;partner_klantnr'.split(
    ';',
  );
const col = (name: string) => COLUMNS.indexOf(name);

/**
 * Copies the sample pipeline into `dir` and plants recognisable values in every row the samples'
 * defects name (rejected rows) and in two rows that stage. Returns the planted values.
 */
function plantedCopy(dir: string): string[] {
  for (const sub of ['pipelines', 'mappings', 'samples/crm']) cpSync(join(ROOT, sub), join(dir, sub), { recursive: true });
  const defects = JSON.parse(readFileSync(join(ROOT, 'samples/crm/defects.json'), 'utf8')) as Array<{ file: string; line: number }>;
  const lines = readFileSync(join(ROOT, 'samples/crm/klanten.csv'), 'latin1').split('\n');
  const targets = [...defects.filter((d) => d.file === 'klanten.csv').map((d) => d.line), 3, 5];
  const secrets: string[] = ['31-02-1980'];
  for (const [i, line] of targets.entries()) {
    const fields = lines[line - 1]!.split(';');
    const plant = (name: string, value: string) => {
      if (col(name) >= fields.length || fields[col(name)] === '') return;
      fields[col(name)] = value;
      secrets.push(value);
    };
    plant('voornamen', `Geheimnaam${i}`);
    plant('achternaam', `Privacyvogel${i}`);
    plant('straat', `Verborgenlaan${i}`);
    plant('email', `geheim${i}@privacy.example`);
    plant('telefoon', `020-77${String(i).padStart(5, '0')}`);
    lines[line - 1] = fields.join(';');
  }
  writeFileSync(join(dir, 'samples/crm/klanten.csv'), Buffer.from(lines.join('\n'), 'latin1'));
  return secrets;
}

function leaks(text: string, secrets: readonly string[]): string[] {
  return secrets.filter((s) => text.includes(s));
}

describe('privacy of what stagecoach writes', () => {
  it('refuses to purge before the migration is complete (exit 2), unless --force', async () => {
    const svc = await startTestService();
    services.push(svc);
    const dir = tempDir('stagecoach-privacy-');
    dirs.push(dir);
    plantedCopy(dir);
    const ledgerArgs = ['--ledger', join(dir, 'ledger.db')];
    expect((await runCli(['run', 'pipelines/crm.yaml', ...ledgerArgs, '--base-url', svc.url], { cwd: dir })).code).toBe(0);
    const early = await runCli(['purge', 'crm', ...ledgerArgs], { cwd: dir });
    expect(early.code).toBe(2);
    expect(early.stdout).toContain('nothing removed: the migration');
    expect((await runCli(['purge', 'crm', '--force', ...ledgerArgs], { cwd: dir })).code).toBe(0);
  });

  it('prints, logs and reports no value of a personal field in a migration at log level trace', async () => {
    const svc = await startTestService();
    services.push(svc);
    const dir = tempDir('stagecoach-privacy-');
    dirs.push(dir);
    const secrets = plantedCopy(dir);
    expect(secrets.length).toBeGreaterThan(20);

    const out = join(dir, 'report');
    const res = await runCli(
      [
        'migrate',
        'pipelines/crm.yaml',
        '--drop-invalid',
        '--ledger',
        join(dir, 'ledger.db'),
        '--out',
        out,
        '--base-url',
        svc.url,
        '--log-level',
        'trace',
      ],
      { cwd: dir },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(leaks(res.stdout, secrets)).toEqual([]);
    expect(leaks(res.stderr, secrets)).toEqual([]);
    for (const f of ['report.md', 'report.html', 'report.json']) {
      const text = readFileSync(join(out, f), 'utf8');
      expect(leaks(text, secrets), f).toEqual([]);
      expect(text).toContain('masked');
    }
    // The report still explains the rejects: file:line and the field, with a masked value.
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    expect(md).toContain('klanten.csv:46');
    expect(md).toContain('**-**-19**');

    // `status` lists the corrections files (they hold the refused rows); `purge` removes them and
    // the refused rows' values in the ledger, after which the ledger file holds none of the values.
    const ledgerArgs = ['--ledger', join(dir, 'ledger.db')];
    const status = await runCli(['status', ...ledgerArgs], { cwd: dir });
    expect(status.stdout).toContain('personal data held locally');
    expect(status.stdout).toContain('corrections file report/klanten.corrections.csv');
    const purged = await runCli(['purge', 'crm', ...ledgerArgs], { cwd: dir });
    expect(purged.code, purged.stderr).toBe(0);
    expect(purged.stdout).toContain('removed report/klanten.corrections.csv');
    expect(existsSync(join(out, 'klanten.corrections.csv'))).toBe(false);
    const checkpoint = new Database(join(dir, 'ledger.db'));
    checkpoint.pragma('wal_checkpoint(TRUNCATE)');
    checkpoint.exec('VACUUM');
    checkpoint.close();
    const ledgerBytes = readFileSync(join(dir, 'ledger.db')).toString('latin1') + readFileSync(join(dir, 'ledger.db'), 'utf8');
    expect(leaks(ledgerBytes, secrets)).toEqual([]);
    expect((await runCli(['status', ...ledgerArgs], { cwd: dir })).stdout).not.toContain('personal data held locally');

    // `plan` shows its reject samples masked too.
    const plan = await runCli(['plan', 'pipelines/crm.yaml'], { cwd: dir });
    expect(plan.code).toBe(0);
    expect(leaks(plan.stdout + plan.stderr, secrets)).toEqual([]);
  });

  it('writes the values with --reveal and says so in the report header', async () => {
    const svc = await startTestService();
    services.push(svc);
    const dir = tempDir('stagecoach-privacy-');
    dirs.push(dir);
    const secrets = plantedCopy(dir);
    const out = join(dir, 'report');
    const res = await runCli(
      [
        'migrate',
        'pipelines/crm.yaml',
        '--drop-invalid',
        '--ledger',
        join(dir, 'ledger.db'),
        '--out',
        out,
        '--base-url',
        svc.url,
        '--reveal',
      ],
      { cwd: dir },
    );
    expect(res.code, res.stderr).toBe(0);
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    expect(md).toContain('31-02-1980');
    expect(leaks(md, secrets).length).toBeGreaterThan(0);
    expect(md).toMatch(/values revealed/i);
  });
});
