/**
 * `init` on a table dump (issue 46): given several export files, which is a parent and which are
 * its child tables (docs/pipelines.md, "Child sources"), from key overlap and column names, each
 * guess explained. A file is a child of another when one of its columns holds the other's key
 * values (most of them found among the parent's keys) and repeats them or is named like the
 * parent's key; the list its rows go into is guessed from its columns (postcodes and streets:
 * addresses; phone numbers: telephoneNumbers; a column naming a relation: relations). Pure: it
 * reads the profiles `init` made (their first rows), not the files.
 */
import type { FileProfile } from './profile.js';

export interface TableDumpFile {
  name: string;
  profile: FileProfile;
  /** The column init took as the file's key, if any. */
  keyColumn: string | undefined;
}

export interface ChildGuess {
  child: string;
  of: string;
  /** The child's column holding the parent's key. */
  key: string;
  /** The list of the parent's record its rows go into; undefined when the columns do not say (a TODO). */
  into: string | undefined;
  /** The child's own key, when a column is unique. */
  id: string | undefined;
  /** Why each part was guessed, one line each. */
  why: string[];
}

/** Share of a child column's sampled values that must be keys of the parent's sample. */
const OVERLAP = 0.8;

const squash = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');
/** Key-like names: `KLANTNR`, `klant_id`, `customer_id` → `klant`, `customer`. */
const stem = (s: string) => squash(s).replace(/(nummer|nr|no|id|key|code)$/, '');

const LISTS: Array<{ into: string; test: RegExp; kind?: string; what: string }> = [
  {
    into: 'addresses',
    test: /post(code|al)|zip|straat|street|plaats|city|woonplaats|huisn|adres|address/i,
    kind: 'postcode',
    what: 'address columns',
  },
  { into: 'telephoneNumbers', test: /tel|phone|mobiel|mobile|gsm/i, kind: 'phone', what: 'phone number columns' },
  { into: 'relations', test: /relat|partner|director|bestuurder|gerelateerd/i, what: 'relation columns' },
];

/** The values of a column in a profile's sampled rows (non-empty, trimmed). */
function sampled(p: FileProfile, column: string): string[] {
  const out: string[] = [];
  for (const row of p.sample) {
    const v = row[column];
    if (v !== undefined && v !== null && String(v).trim() !== '') out.push(String(v).trim());
  }
  return out;
}

/**
 * The child tables among `files`, each with its parent and why.
 * @example recogniseTableDump(files) // [{ child: 'adressen', of: 'klanten', key: 'KLANTNR', into: 'addresses', id: 'ADRESNR', why: [...] }]
 */
export function recogniseTableDump(files: readonly TableDumpFile[]): ChildGuess[] {
  const parents = files.filter((f) => f.keyColumn !== undefined);
  const guesses: ChildGuess[] = [];
  for (const c of files) {
    let best: { of: TableDumpFile; key: string; overlap: number; named: boolean; repeats: boolean } | undefined;
    for (const p of parents) {
      if (p === c) continue;
      const keys = new Set(sampled(p.profile, p.keyColumn!));
      if (keys.size === 0) continue;
      // A parent sampled whole says which values are no key of it; one sampled in part only which are.
      for (const col of c.profile.columns) {
        if (col.name === c.keyColumn && col.unique) continue;
        const values = sampled(c.profile, col.name);
        if (values.length === 0) continue;
        const overlap = values.filter((v) => keys.has(v)).length / values.length;
        const named = stem(col.name) !== '' && stem(col.name) === stem(p.keyColumn!);
        const repeats = new Set(values).size < values.length;
        const wholeParent = p.profile.rows <= p.profile.sample.length;
        if ((wholeParent ? overlap < OVERLAP : overlap === 0) || !(named || repeats)) continue;
        if (!best || overlap > best.overlap || (overlap === best.overlap && named && !best.named))
          best = { of: p, key: col.name, overlap, named, repeats };
      }
    }
    if (!best) continue;
    // A child whose own key is what its parent's rows name is the parent, not the child.
    if (best.of.keyColumn && c.keyColumn === best.key) continue;
    const why = [
      `${c.name}.${best.key} holds ${best.of.name}'s keys (${best.of.keyColumn}): ${Math.round(best.overlap * 100)}% of its sampled values are keys of ${best.of.name}'s sampled rows${best.of.profile.rows > best.of.profile.sample.length ? ` (${best.of.name} sampled in part: the share is a floor)` : ''}`,
      best.named
        ? `the column is named like ${best.of.name}'s key (${best.key} ~ ${best.of.keyColumn})`
        : `values repeat in ${best.key}: several rows per ${best.of.name} row`,
    ];
    const list = LISTS.find((l) =>
      c.profile.columns.some((col) => l.test.test(col.name) || (l.kind !== undefined && (col.kinds[l.kind] ?? 0) > 0)),
    );
    why.push(list ? `its ${list.what} say its rows go into ${list.into}` : `no column says which list its rows go into: into is a TODO`);
    // A unique phone number or postcode is data, not an id.
    const id = c.profile.columns.find((col) => col.unique && col.name !== best!.key && !(col.kinds.phone || col.kinds.postcode))?.name;
    if (id) why.push(`${id} is unique in ${c.name}: the row's own id (a repeated id under one parent is a duplicate)`);
    guesses.push({ child: c.name, of: best.of.name, key: best.key, into: list?.into, id, why });
  }
  return guesses;
}

/**
 * The guesses as YAML comments for the pipeline file, each declaration with its reasons; left
 * commented out, since a child source takes a child mapping file (item:), which init does not
 * write yet: the user writes it and uncomments the line.
 */
export function childDeclarationsYaml(guesses: readonly ChildGuess[]): string {
  if (guesses.length === 0) return '';
  const lines = [
    '',
    '# Child tables recognised (docs/pipelines.md, "Child sources"). Each source below looks like a child',
    "# of another: to join its rows into the parent's records, give it a child mapping file (item: …)",
    '# and add the child: line to the source.',
  ];
  for (const g of guesses) {
    const decl = `child: { of: ${g.of}, key: ${g.key}, into: ${g.into ?? 'TODO'}${g.id ? `, id: ${g.id}` : ''} }`;
    lines.push(`#   ${g.child}: ${decl}`);
    for (const w of g.why) lines.push(`#     - ${w}`);
  }
  return `${lines.join('\n')}\n`;
}
