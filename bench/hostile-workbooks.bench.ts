/**
 * Hostile and damaged workbooks through the real CLI (issue 41): zip bombs of about 1 MB that
 * inflate to 1 GiB (whitespace between rows, one cell, one shared string, one row of empty
 * cells, a styles part), a sheet with 40 bytes flipped, a workbook cut short, a file that is no
 * zip. Each is given to `stagecoach plan` in a child process of its own: its peak RSS, time and
 * outcome are printed, and the bench fails when one is not refused with exit 1 naming the
 * workbook, takes more than 300 MB, or runs past its time bound. The bombs are written here by
 * streaming deflate (never 1 GiB in memory): a minimal zip writer, as hostile files are made.
 * `npm run bench -- hostile-workbooks` (or `-- hostile`, with the other hostile benches).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, createDeflateRaw } from 'node:zlib';
import { workbookBytes } from './xlsx-generated.js';
import { type BenchOptions, type BenchRow, mb, samplePeakRss } from './harness.js';

export const title = 'hostile-workbooks: hostile and damaged workbooks through `plan`';

const CLI = join(import.meta.dirname, '..', 'src', 'cli', 'main.js');
const GiB = 2 ** 30;
const MAX_RSS = 300 * 2 ** 20;
const TIME_BOUND_MS = 300_000;
const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** A part's text: what comes before, `filler` repeated to `fillBytes`, what comes after. */
interface Part {
  name: string;
  before: string;
  filler?: string;
  fillBytes?: number;
  after?: string;
}

/** A part deflated by streaming (the filler never held whole), with its CRC-32 and inflated size. */
async function deflatePart(p: Part): Promise<{ data: Buffer; crc: number; size: number }> {
  const z = createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  z.on('data', (d: Buffer) => out.push(d));
  const done = new Promise((resolve, reject) => z.on('end', resolve).on('error', reject));
  let crc = 0;
  let size = 0;
  const put = async (b: Buffer) => {
    crc = crc32(b, crc);
    size += b.length;
    if (!z.write(b)) await new Promise((resolve) => z.once('drain', resolve));
  };
  await put(Buffer.from(p.before));
  if (p.filler && p.fillBytes) {
    // Whole fillers only, so a filler of elements (`<si/>`) is never cut between chunks.
    const one = Buffer.byteLength(p.filler);
    const chunk = Buffer.from(p.filler.repeat(Math.max(1, Math.floor(2 ** 20 / one))));
    const whole = Math.floor(p.fillBytes / one) * one;
    for (let left = whole; left > 0; left -= chunk.length) await put(left >= chunk.length ? chunk : chunk.subarray(0, left));
  }
  if (p.after) await put(Buffer.from(p.after));
  z.end();
  await done;
  return { data: Buffer.concat(out), crc: crc >>> 0, size };
}

/** A zip of the parts given (deflated, 32-bit sizes): the container of an XLSX file. */
async function zipOf(parts: Part[]): Promise<Buffer> {
  const local: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const p of parts) {
    const { data, crc, size } = await deflatePart(p);
    const name = Buffer.from(p.name);
    const h = Buffer.alloc(30);
    h.writeUInt32LE(0x04034b50, 0);
    h.writeUInt16LE(20, 4);
    h.writeUInt16LE(8, 8);
    h.writeUInt32LE(crc, 14);
    h.writeUInt32LE(data.length, 18);
    h.writeUInt32LE(size, 22);
    h.writeUInt16LE(name.length, 26);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(8, 10);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(data.length, 20);
    c.writeUInt32LE(size, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE(offset, 42);
    local.push(h, name, data);
    central.push(c, name);
    offset += 30 + name.length + data.length;
  }
  const dir = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...local, dir, end]);
}

const HEADER = '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>';
const ROW2 = '<row r="2"><c r="A2"><v>1001</v></c><c r="B2" t="inlineStr"><is><t>Jansen</t></is></c></row>';

/** A workbook of one sheet `Data` whose parts are those given, the others as small as they come. */
function workbook(over: Partial<Record<'sheet' | 'strings' | 'styles', Part>>): Promise<Buffer> {
  const sheet: Part = over.sheet ?? { name: '', before: `<worksheet xmlns="${NS}"><sheetData>${HEADER}${ROW2}</sheetData></worksheet>` };
  const strings: Part = over.strings ?? { name: '', before: `<sst xmlns="${NS}"><si><t>nr</t></si><si><t>naam</t></si></sst>` };
  const styles: Part = over.styles ?? {
    name: '',
    before: `<styleSheet xmlns="${NS}"><cellXfs count="1"><xf numFmtId="0"/></cellXfs></styleSheet>`,
  };
  return zipOf([
    {
      name: 'xl/workbook.xml',
      before: `<workbook xmlns="${NS}" xmlns:r="${REL}"><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      before: `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`,
    },
    { ...styles, name: 'xl/styles.xml' },
    { ...strings, name: 'xl/sharedStrings.xml' },
    { ...sheet, name: 'xl/worksheets/sheet1.xml' },
  ]);
}

/** The hostile files: what each is, and how it is written. */
const CASES: { name: string; write(): Promise<Buffer>; within?: true }[] = [
  {
    name: '1 GiB of whitespace between rows',
    write: () =>
      workbook({
        sheet: {
          name: '',
          before: `<worksheet xmlns="${NS}"><sheetData>${HEADER}${ROW2}`,
          filler: ' ',
          fillBytes: GiB,
          after: `${ROW2.replaceAll('2', '3')}</sheetData></worksheet>`,
        },
      }),
  },
  {
    name: '1 GiB in one cell',
    write: () =>
      workbook({
        sheet: {
          name: '',
          before: `<worksheet xmlns="${NS}"><sheetData>${HEADER}<row r="2"><c r="A2"><v>1</v></c><c r="B2" t="inlineStr"><is><t>`,
          filler: 'A',
          fillBytes: GiB,
          after: '</t></is></c></row></sheetData></worksheet>',
        },
      }),
  },
  {
    name: '1 GiB in one shared string',
    write: () =>
      workbook({
        strings: {
          name: '',
          before: `<sst xmlns="${NS}"><si><t>nr</t></si><si><t>naam</t></si><si><t>`,
          filler: 'A',
          fillBytes: GiB,
          after: '</t></si></sst>',
        },
      }),
  },
  {
    name: '1 GiB of empty cells in one row',
    write: () =>
      workbook({
        sheet: {
          name: '',
          before: `<worksheet xmlns="${NS}"><sheetData>${HEADER}<row r="2">`,
          filler: '<c/>',
          fillBytes: GiB,
          after: '</row></sheetData></worksheet>',
        },
      }),
  },
  {
    name: '1 GiB styles part',
    write: () =>
      workbook({ styles: { name: '', before: `<styleSheet xmlns="${NS}">`, filler: ' ', fillBytes: GiB, after: '</styleSheet>' } }),
  },
  {
    name: '40 bytes flipped in the compressed sheet',
    write: async () => {
      const rows = Array.from(
        { length: 20_000 },
        (_, i) =>
          `<row r="${i + 2}"><c r="A${i + 2}"><v>${i}</v></c><c r="B${i + 2}" t="inlineStr"><is><t>Naam ${(i * 7919) % 10_007}</t></is></c></row>`,
      );
      const bytes = await workbookBytes({
        sheetName: 'Data',
        sheetXml: `<sheetData>${HEADER.replaceAll('t="s"><v>0', 't="inlineStr"><is><t>nr</t></is').replaceAll('t="s"><v>1', 't="inlineStr"><is><t>naam</t></is').replaceAll('</v></c>', '</c>')}${rows.join('')}</sheetData>`,
      });
      const name = Buffer.from('xl/worksheets/sheet1.xml');
      let at = bytes.indexOf(Buffer.from('PK\x03\x04', 'latin1'));
      while (!bytes.subarray(at + 30, at + 30 + name.length).equals(name)) at = bytes.indexOf(Buffer.from('PK\x03\x04', 'latin1'), at + 4);
      const start = at + 30 + bytes.readUInt16LE(at + 26) + bytes.readUInt16LE(at + 28);
      for (let i = 0; i < 40; i++) bytes[start + Math.floor(bytes.readUInt32LE(at + 18) / 2) + i]! ^= 0xff;
      return bytes;
    },
  },
  {
    name: 'a workbook cut short',
    write: async () => {
      const whole = await workbook({});
      return whole.subarray(0, Math.floor(whole.length / 2));
    },
  },
  // Within every limit, but as many strings as the part limit allows: read, in bounded memory.
  ...(['<si/>', '<si><t>中</t></si>'] as const).map((si) => ({
    name: `shared strings ${si} to just under the part limit`,
    within: true as const,
    write: () =>
      workbook({
        strings: {
          name: '',
          before: `<sst xmlns="${NS}"><si><t>nr</t></si><si><t>naam</t></si>`,
          filler: si,
          fillBytes: 127 * 2 ** 20,
          after: '</sst>',
        },
      }),
  })),
  { name: 'a text file named .xlsx', write: async () => Buffer.from('nr;naam\n1;Jansen\n') },
  { name: 'a deflate stream of garbage', write: async () => zipGarbage() },
];

/** A zip whose sheet's deflate stream is random bytes. */
async function zipGarbage(): Promise<Buffer> {
  const good = await workbook({});
  const sheet = Buffer.from('xl/worksheets/sheet1.xml');
  const at = good.indexOf(sheet) - 30;
  const start = at + 30 + sheet.length;
  const size = good.readUInt32LE(at + 18);
  let x = 7;
  for (let i = 0; i < size; i++) good[start + i] = (x = (x * 1_103_515_245 + 12_345) >>> 0) >>> 24;
  return good;
}

const PIPELINE = [
  'name: hostile',
  'sources:',
  '  - name: people',
  '    format: xlsx',
  '    path: hostile.xlsx',
  '    xlsx: { sheet: Data }',
  '    mapping: mapping.yaml',
  'target: { referenceNamespace: 3f1d8c52-6b0e-5a4f-9d2c-7e8a1b4c6d0f }',
  '',
].join('\n');
const MAPPING = ['type: person', 'key: { column: nr, scope: hostile }', 'record:', '  surname: { column: naam, required: true }', ''].join(
  '\n',
);

/** `plan` on the workbook in `dir`: exit code, time, peak RSS, and its first line naming an error. */
function plan(dir: string): Promise<{ code: number | null; ms: number; peakRss: number; message: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, 'plan', 'pipeline.yaml'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    const rss = samplePeakRss(child.pid!, 50);
    let err = '';
    child.stdout.on('data', () => {});
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), TIME_BOUND_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const message =
        code === 0 ? 'read within the limits' : (err.split('\n').find((l) => l.includes('hostile.xlsx')) ?? err.split('\n')[0] ?? '');
      resolve({ code, ms: performance.now() - started, peakRss: rss.stop(), message });
    });
  });
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  writeFileSync(join(options.workDir, 'pipeline.yaml'), PIPELINE);
  writeFileSync(join(options.workDir, 'mapping.yaml'), MAPPING);
  const rows: BenchRow[] = [];
  const failures: string[] = [];
  // STAGECOACH_HOSTILE_ONLY=<words>: only the cases whose name holds them (to look at one).
  const only = process.env.STAGECOACH_HOSTILE_ONLY;
  for (const c of CASES.filter((k) => !only || k.name.includes(only))) {
    const bytes = await c.write();
    writeFileSync(join(options.workDir, 'hostile.xlsx'), bytes);
    const got = await plan(options.workDir);
    const outcome = got.code === null ? `killed after ${TIME_BOUND_MS / 1000} s` : `exit ${got.code}`;
    rows.push({
      benchmark: title,
      metric: `${c.name} (${(bytes.length / 1024).toFixed(0)} KB): peak RSS`,
      value: mb(got.peakRss),
      unit: 'MB',
      note: `${outcome} in ${(got.ms / 1000).toFixed(1)} s: ${got.message.slice(0, 220)}`,
    });
    const expected = c.within ? got.code === 0 : got.code === 1 && got.message.includes('hostile.xlsx');
    if (!expected || got.peakRss > MAX_RSS) failures.push(`${c.name}: ${outcome}, ${mb(got.peakRss)} MB, "${got.message}"`);
  }
  if (failures.length > 0) throw new Error(`hostile workbooks not refused within bounds:\n${failures.join('\n')}`);
  return rows;
}
