/**
 * The child rows of one top-level source, indexed on disk by the parent key they name, so that
 * children in any order join their parents without being held in memory: a scratch SQLite file
 * in the system's temporary folder (not the ledger: `plan` has none, and the ledger's writer
 * thread owns its connection), written in one transaction per file chunk, its index built after
 * the bulk insert, deleted when the pass ends. A parent row takes its children out (`take`);
 * what is left at the end names no parent row read: the orphans.
 *
 * Memory: SQLite's page cache (bounded below) and one batch of rows at a time.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Values } from '../mapping/compile.js';
import type { Provenance, SourceRow } from '../types.js';

/** A child row as the index gives it back: its child source's number, and the row. */
export interface StoredChild {
  child: number;
  seq: number;
  row: SourceRow;
}

interface Stored {
  child: number;
  seq: number;
  file: number;
  line: number;
  byte_offset: number;
  hash: string;
  vals: string;
  pkey: string;
}

/** Page cache of the scratch database, in KiB (SQLite's negative cache_size; also what its sorter holds before spilling). */
const CACHE_KIB = 32 * 1024;
/** The parent of a top-level source's children (a child source's children have its number). */
export const ROOT_PARENT = -1;

/**
 * Rows are appended as read (a plain table), then copied once, sorted by parent and key, into a
 * table clustered on them (SQLite's sorter, spilling to disk): a parent's children then sit
 * together, one B-tree descent finds them all, whatever their order in the files (half the time
 * of a secondary index, which fetched each row from elsewhere).
 */
export class ChildIndex {
  private readonly dir = mkdtempSync(join(tmpdir(), 'stagecoach-children-'));
  private readonly db = new Database(join(this.dir, 'children.db'));
  private readonly files: string[] = [];
  private readonly sources: { name: string; parent: number }[] = [];
  private readonly insert;
  private takeRows: Database.Statement<[number, string], Stored> | undefined;
  private leftRows: Database.Statement<[number], Stored> | undefined;
  private claim: Database.Statement<[number, string]> | undefined;
  private seq = 0;
  private readonly shapes = new Shapes();

  constructor() {
    // A scratch file: nothing to recover after a crash, so no journal and no syncs.
    this.db.pragma('journal_mode = OFF');
    this.db.pragma('synchronous = OFF');
    this.db.pragma(`cache_size = -${CACHE_KIB}`);
    this.db.pragma('temp_store = FILE');
    this.db.pragma('locking_mode = EXCLUSIVE');
    this.db.exec(
      'CREATE TABLE rows (seq INTEGER PRIMARY KEY, child INTEGER NOT NULL, parent INTEGER NOT NULL, pkey TEXT NOT NULL, file INTEGER NOT NULL, line INTEGER NOT NULL, byte_offset INTEGER NOT NULL, hash TEXT NOT NULL, vals TEXT NOT NULL)',
    );
    this.insert = this.db.prepare(
      'INSERT INTO rows (seq, child, parent, pkey, file, line, byte_offset, hash, vals) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    // One transaction for the index's whole life: a commit per statement wrote the pages out each
    // time (a take per parent row: 27 of 33 s at 20,000 customers, waiting on writes). Pages past
    // the cache still spill to the file, so memory stays bounded.
    this.db.exec('BEGIN');
  }

  /** A number for a child source whose rows name a row of `parent` (ROOT_PARENT, or another child source's number). */
  source(name: string, parent: number): number {
    return this.sources.push({ name, parent }) - 1;
  }

  /** A number for a file's name, kept once. */
  file(name: string): number {
    const at = this.files.indexOf(name);
    return at >= 0 ? at : this.files.push(name) - 1;
  }

  /** Stores a batch of rows of child source `child`, each under the parent key it names (undefined: none). */
  add(child: number, file: number, rows: readonly { row: SourceRow; parentKey: string | undefined }[]): void {
    const parent = this.sources[child]!.parent;
    for (const { row, parentKey } of rows) {
      const p = row.provenance;
      // '' is no key (a key is never empty): such a row stays, an orphan.
      this.insert.run(this.seq++, child, parent, parentKey ?? '', file, p.line, p.byteOffset, p.hash, this.shapes.encode(row.values));
    }
  }

  /** Sorts the rows into the table the lookups read, once every row is stored. */
  ready(): void {
    if (this.takeRows) return;
    this.db.exec(
      'CREATE TABLE joined (parent INTEGER NOT NULL, pkey TEXT NOT NULL, seq INTEGER NOT NULL, child INTEGER NOT NULL, file INTEGER NOT NULL, line INTEGER NOT NULL, byte_offset INTEGER NOT NULL, hash TEXT NOT NULL, vals TEXT NOT NULL, PRIMARY KEY (parent, pkey, seq)) WITHOUT ROWID',
    );
    this.db.exec(
      'INSERT INTO joined SELECT parent, pkey, seq, child, file, line, byte_offset, hash, vals FROM rows ORDER BY parent, pkey, seq; DROP TABLE rows',
    );
    // Read, not deleted: a delete dirtied every page it touched, and a million parents wrote the
    // table out again. What was taken is a key in `taken` (small rows); the rest are orphans.
    this.db.exec('CREATE TABLE taken (parent INTEGER NOT NULL, pkey TEXT NOT NULL, PRIMARY KEY (parent, pkey)) WITHOUT ROWID');
    this.claim = this.db.prepare('INSERT OR IGNORE INTO taken (parent, pkey) VALUES (?, ?)');
    this.takeRows = this.db.prepare<[number, string], Stored>(
      'SELECT child, seq, file, line, byte_offset, hash, vals, pkey FROM joined WHERE parent = ? AND pkey = ?',
    );
    this.leftRows = this.db.prepare<[number], Stored>(
      'SELECT child, seq, file, line, byte_offset, hash, vals, pkey FROM joined j WHERE child = ? AND NOT EXISTS (SELECT 1 FROM taken t WHERE t.parent = j.parent AND t.pkey = j.pkey) ORDER BY seq',
    );
  }

  /**
   * Takes out the rows of every child source of `parent` that name `parentKey`, in file order;
   * none when a row of `parent` with that key took them before (a duplicate parent gets none).
   */
  take(parent: number, parentKey: string): StoredChild[] {
    const got = this.takeRows!.all(parent, parentKey);
    if (got.length === 0 || this.claim!.run(parent, parentKey).changes === 0) return [];
    // The clustered key ends in seq: the rows come in file order.
    return got.map((r) => this.toChild(r));
  }

  /** The rows of `child` no parent took, in file order (streamed). */
  *left(child: number): Generator<StoredChild & { parentKey: string | undefined }> {
    for (const r of this.leftRows!.iterate(child)) yield { ...this.toChild(r), parentKey: r.pkey === '' ? undefined : r.pkey };
  }

  close(): void {
    try {
      this.db.close();
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  private toChild(r: Stored): StoredChild {
    const provenance: Provenance = { file: this.files[r.file]!, line: r.line, byteOffset: r.byte_offset, hash: r.hash };
    return { child: r.child, seq: r.seq, row: { source: this.sources[r.child]!.name, values: this.shapes.decode(r.vals), provenance } };
  }
}

/** How many distinct column lists (row shapes) are kept; rows of further shapes are stored as objects. */
const SHAPES_KEPT = 256;

/**
 * Row values as short text: the values alone, as a JSON array after the number of their column
 * list (`3["A1","100036","Kerkstraat"]`), the lists kept here once (a CSV file has one), since
 * the scratch file's bytes are what its time goes to; a row of a shape past the first
 * SHAPES_KEPT is kept as its JSON object (`{…}`).
 */
class Shapes {
  private readonly lists: string[][] = [];
  private readonly byKey = new Map<string, number>();

  encode(values: Values): string {
    const keys = Object.keys(values);
    const sig = keys.join('\u0000');
    let n = this.byKey.get(sig);
    if (n === undefined) {
      if (this.lists.length >= SHAPES_KEPT) return JSON.stringify(values);
      n = this.lists.push(keys) - 1;
      this.byKey.set(sig, n);
    }
    const out: unknown[] = new Array(keys.length);
    for (let i = 0; i < keys.length; i++) out[i] = values[keys[i]!];
    return `${n}${JSON.stringify(out)}`;
  }

  decode(text: string): Values {
    if (text.charCodeAt(0) === 123) return JSON.parse(text) as Values;
    const at = text.indexOf('[');
    const keys = this.lists[Number(text.slice(0, at))]!;
    const list = JSON.parse(text.slice(at)) as unknown[];
    const values: Values = {};
    // (A value the reader left undefined comes back null: both are empty to a mapping.)
    for (let i = 0; i < keys.length; i++) values[keys[i]!] = list[i];
    return values;
  }
}
