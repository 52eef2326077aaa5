/**
 * Writes a personality's rows in its file format: CSV (delimiter and encoding of its language),
 * JSON Lines (nested name, address and a contacts array; numbers where text is meant), an Excel
 * workbook (title, total and footnote rows, a notes sheet, rich text, formulas with their cached
 * value, date cells in the 1900 or 1904 system) and a fixed-width extract with its COBOL copybook
 * (a program prefix, 88-level conditions, a header record and a trailer with count and hash total).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { csvField, pad2, Rng, TextFile } from '../foreign/common.js';
import { type Personality, type PersonalityTruth, type PersonRow, personRows, writeAmountText, writeDate } from './personality.js';
import type { FieldRole } from './vocabulary.js';

export interface WrittenExport {
  files: string[];
  layout?: string;
  truth: PersonalityTruth[];
  bytes: number;
}

/** The text of a row's cell for `role`, in the export's notation. */
function textOf(rng: Rng, p: Personality, row: PersonRow, role: FieldRole): string {
  if (role === 'dateOfBirth') return row.dob ? writeDate(rng, p, row.dob) : row.placeholder!;
  if (role === 'income') return writeAmountText(rng, p, row.incomeCents);
  return row.text[role] ?? '';
}

export async function writeCsv(p: Personality, out: string, rows: number): Promise<WrittenExport> {
  const latin = ['en', 'nl', 'de', 'fr', 'es', 'it', 'pt', 'sv'].includes(p.lang) && !p.decomposed && p.seed % 2 === 0;
  const delimiter = p.lang === 'en' ? ',' : [';', ';', '\t', '|'][p.seed % 4]!;
  const path = join(out, `export-${p.seed}.csv`);
  const file = await TextFile.open(path, latin ? 'latin1' : 'utf-8');
  const rng = new Rng(p.seed + 11);
  await file.line(p.columns.map(([, h]) => csvField(h, delimiter)).join(delimiter), '\r\n');
  const truth: PersonalityTruth[] = [];
  for (const row of personRows(p, rows)) {
    truth.push(row.truth);
    await file.line(p.columns.map(([role]) => csvField(textOf(rng, p, row, role), delimiter)).join(delimiter), '\r\n');
  }
  await file.close();
  return { files: [path], truth, bytes: file.bytes };
}

/** A JSON key from a header: the words in camelCase, accents kept (as JSON exports of CRMs do). */
const jsonKey = (header: string) =>
  header
    .replace(/\([^)]*\)/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .map((w, i) => (i === 0 ? w.toLowerCase() : w[0]!.toUpperCase() + w.slice(1).toLowerCase()))
    .join('');

export async function writeJsonLines(p: Personality, out: string, rows: number): Promise<WrittenExport> {
  const path = join(out, `export-${p.seed}.jsonl`);
  const file = await TextFile.open(path, 'utf-8');
  const rng = new Rng(p.seed + 12);
  const h = Object.fromEntries(p.columns.map(([role, header]) => [role, jsonKey(header)])) as Record<FieldRole, string>;
  const truth: PersonalityTruth[] = [];
  const numeric = (s: string) => (p.jsonNumbers && /^\d+$/.test(s) ? Number(s) : s);
  for (const row of personRows(p, rows)) {
    truth.push(row.truth);
    const t = row.text;
    const record: Record<string, unknown> = {
      [h.key]: p.jsonNumbers && /^\d+$/.test(t.key!) ? Number(t.key) : t.key,
      name: { [h.firstName]: t.firstName, [h.surname]: t.surname, ...(h.initials ? { [h.initials]: t.initials } : {}) },
      [h.sex]: t.sex,
      [h.dateOfBirth]: textOf(rng, p, row, 'dateOfBirth'),
      address: { [h.street]: t.street, [h.postcode]: numeric(t.postcode!), [h.town]: t.town, [h.country]: t.country },
      // Contacts as a list, the way SaaS CRMs nest them; a phone written as digits only becomes a number.
      contacts: [
        { type: 'phone', value: p.jsonNumbers ? numeric(t.phone!.replace(/[\s()./-]/g, '').replace(/^\+/, '')) : t.phone },
        { type: 'email', value: t.email },
      ],
      [h.income]: p.amount.currency === 'values' ? textOf(rng, p, row, 'income') : row.incomeCents / 100,
      ...(h.frequency ? { [h.frequency]: t.frequency } : {}),
      [h.status]: t.status,
    };
    await file.line(JSON.stringify(record));
  }
  await file.close();
  return { files: [path], truth, bytes: file.bytes };
}

export async function writeWorkbook(p: Personality, out: string, rows: number): Promise<WrittenExport> {
  const path = join(out, `export-${p.seed}.xlsx`);
  const wb = new ExcelJS.Workbook();
  const date1904 = p.date.kind === 'cell' && p.date.date1904;
  if (date1904) wb.properties.date1904 = true;
  const notes = wb.addWorksheet(['Notes', 'Toelichting', 'Hinweise', 'Remarques'][p.seed % 4]!);
  notes.addRow(['Export notes']);
  notes.addRow(['Column', 'Meaning']);
  for (const [, header] of p.columns.slice(0, 6)) notes.addRow([header, `as kept by the back office (${header})`]);
  const ws = wb.addWorksheet(['Customers', 'Klanten', 'Kunden', 'Clients'][p.seed % 4]!);
  ws.addRow([`Customer export ${2026} — back office`]);
  ws.addRow([]);
  ws.addRow(p.columns.map(([, h]) => h));
  const rng = new Rng(p.seed + 13);
  const truth: PersonalityTruth[] = [];
  const incomeCol = p.columns.findIndex(([r]) => r === 'income') + 1;
  let sum = 0;
  for (const row of personRows(p, rows)) {
    truth.push(row.truth);
    sum += row.incomeCents;
    const added = ws.addRow(p.columns.map(([role]) => cellOf(rng, p, row, role)));
    // A formula whose cached value is the amount (what Excel saved), on one row in ten.
    if (incomeCol > 0 && rng.chance(0.1) && p.amount.currency !== 'values')
      added.getCell(incomeCol).value = { formula: `ROUND(${row.incomeCents}/100,2)`, result: row.incomeCents / 100 };
  }
  const column = ws.getColumn(incomeCol).letter;
  ws.addRow(
    p.columns.map(([role], i) =>
      i === 0 ? 'Total' : role === 'income' ? { formula: `SUM(${column}4:${column}${rows + 3})`, result: sum / 100 } : null,
    ),
  );
  ws.addRow([`* figures as of 31/12/2025; source: core system (${rows} customers)`]);
  if (date1904) wb.properties.date1904 = true;
  await wb.xlsx.writeFile(path);
  return { files: [path], truth, bytes: 0 };
}

/** A workbook cell: dates as date cells (some as text), amounts as numbers, a surname now and then as rich text. */
function cellOf(rng: Rng, p: Personality, row: PersonRow, role: FieldRole): ExcelJS.CellValue {
  if (role === 'dateOfBirth') {
    if (!row.dob) return row.placeholder === '' ? null : row.placeholder!;
    // exceljs writes a Date as the serial of the workbook's date system (1900 or 1904).
    if (p.date.kind === 'cell' && !rng.chance(p.date.textShare)) return new Date(Date.UTC(row.dob.y, row.dob.m - 1, row.dob.d));
    return p.date.kind === 'cell' ? `${pad2(row.dob.d)}/${pad2(row.dob.m)}/${row.dob.y}` : writeDate(rng, p, row.dob);
  }
  if (role === 'income') return p.amount.currency === 'values' ? writeAmountText(rng, p, row.incomeCents) : row.incomeCents / 100;
  const text = row.text[role] ?? '';
  if (role === 'surname' && text.length > 2 && rng.chance(0.2))
    return { richText: [{ text: text.slice(0, 2) }, { text: text.slice(2), font: { bold: true } }] };
  return text;
}

/** Zoned decimal with the sign over the last digit (EBCDIC overpunch as ASCII: `{`, A–I positive). */
const OVERPUNCH_POSITIVE = '{ABCDEFGHI';

export async function writeFixedWidth(p: Personality, out: string, rows: number): Promise<WrittenExport> {
  const path = join(out, `CUST${p.seed}.DAT`);
  const layoutPath = join(out, `cust${p.seed}.cpy`);
  const lengths: Record<FieldRole, number> = {
    key: 8,
    initials: 6,
    firstName: 15,
    surname: 20,
    sex: 1,
    dateOfBirth: 8,
    street: 30,
    postcode: 10,
    town: 20,
    country: 3,
    phone: 18,
    email: 0,
    income: p.amount.sign === 'trailing' ? 10 : 9,
    frequency: 1,
    status: 1,
  };
  const sexCodes = { male: 'M', female: 'F' } as const;
  const fields = p.columns.map(([role, name]) => ({ role, name, length: lengths[role] }));
  const recordLength = fields.reduce((n, f) => n + f.length, 0);
  await writeFile(layoutPath, copybook(p, fields));
  const file = await TextFile.open(path, 'utf-8');
  await file.line(`HDR${p.naming.prefix.replace(/-$/, '')} EXTRACT 20261127`.padEnd(recordLength, ' '));
  const truth: PersonalityTruth[] = [];
  let hash = 0;
  for (const row of personRows(p, rows)) {
    truth.push(row.truth);
    hash += row.incomeCents;
    const line = fields
      .map((f) => {
        let v: string;
        if (f.role === 'income') {
          const digits = String(row.incomeCents).padStart(9, '0');
          v =
            p.amount.sign === 'overpunch'
              ? digits.slice(0, 8) + OVERPUNCH_POSITIVE[Number(digits[8])]
              : p.amount.sign === 'trailing'
                ? `${digits}+`
                : digits;
          return v;
        }
        if (f.role === 'dateOfBirth') v = row.dob ? `${row.dob.y}${pad2(row.dob.m)}${pad2(row.dob.d)}` : row.placeholder || '00000000';
        else if (f.role === 'sex') v = sexCodes[row.truth.sex!];
        else if (f.role === 'country') v = row.text.country!.slice(0, 3);
        else if (f.role === 'frequency') v = row.truth.income?.frequency === 'Yearly' ? 'Y' : 'M';
        else v = (row.text[f.role] ?? '').normalize('NFC');
        return f.role === 'key' ? v.padStart(f.length, '0') : v.toUpperCase().padEnd(f.length, ' ').slice(0, f.length);
      })
      .join('');
    await file.line(line);
  }
  // The trailer: record count, then the hash total of the incomes right beside it (no blank between).
  await file.line(`TRL${String(rows).padStart(9, '0')}${String(hash).padStart(18, '0')}`.padEnd(recordLength, ' '));
  await file.close();
  return { files: [path], layout: layoutPath, truth, bytes: file.bytes };
}

/** The COBOL copybook of a fixed-width personality: prefixed names, 88-levels for codes and for "date not known". */
function copybook(p: Personality, fields: Array<{ role: FieldRole; name: string; length: number }>): string {
  const lines = [
    `      * CUSTOMER MASTER EXTRACT (${p.naming.prefix}RECORD), ONE RECORD PER CUSTOMER`,
    `       01  ${p.naming.prefix}RECORD.`,
  ];
  for (const f of fields) {
    if (f.length === 0) continue;
    const pic =
      f.role === 'key'
        ? `9(${f.length})`
        : f.role === 'dateOfBirth'
          ? '9(8)'
          : f.role === 'income'
            ? p.amount.sign === 'trailing'
              ? 'S9(7)V99 SIGN TRAILING SEPARATE'
              : p.amount.sign === 'overpunch'
                ? 'S9(7)V99'
                : '9(7)V99'
            : `X(${f.length})`;
    lines.push(`           05  ${f.name.padEnd(20)} PIC ${pic}.`);
    if (f.role === 'dateOfBirth') {
      const unknown = p.placeholders.filter((x) => /^\d{8}$/.test(x));
      lines.push(`      *        ${unknown.join(' OR ') || 'ZEROS'} = DATE OF BIRTH NOT KNOWN`);
      lines.push(`               88  ${f.name}-UNKNOWN    VALUE ${unknown.length > 0 ? unknown.join(' ') : 'ZEROS'}.`);
    }
    if (f.role === 'sex') {
      lines.push(`               88  ${f.name}-MALE       VALUE 'M'.`);
      lines.push(`               88  ${f.name}-FEMALE     VALUE 'F'.`);
    }
    if (f.role === 'status') {
      lines.push(`               88  ${f.name}-ACTIVE     VALUE 'A'.`);
      lines.push(`               88  ${f.name}-INACTIVE   VALUE 'I'.`);
    }
    if (f.role === 'frequency') {
      lines.push(`               88  ${f.name}-MONTHLY    VALUE 'M'.`);
      lines.push(`               88  ${f.name}-YEARLY     VALUE 'Y'.`);
    }
  }
  // Half the teams describe the trailer record too: the count where the trailer's own layout says.
  if (p.seed % 2 === 0)
    lines.push(
      `       01  ${p.naming.prefix}TRAILER.`,
      `           05  ${p.naming.prefix}TRL-ID            PIC X(3).`,
      `           05  ${p.naming.prefix}TRL-COUNT         PIC 9(9).`,
      `           05  ${p.naming.prefix}TRL-HASH-TOTAL    PIC 9(18).`,
    );
  return `${lines.join('\n')}\n`;
}
