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

/** A child row as the index gives it back. */
export interface StoredChild {
  seq: number;
  row: SourceRow;
}

interface Stored {
  seq: number;
  file: number;
  line: number;
  byte_offset: number;
  hash: string;
  vals: string;
  pkey: string | null;
}

/** Page cache of the scratch database, in KiB (SQLite's negative cache_size). */
const CACHE_KIB = 32 * 1024;

export class ChildIndex {
  private readonly dir = mkdtempSync(join(tmpdir(), 'stagecoach-children-'));
  private readonly db = new Database(join(this.dir, 'children.db'));
  private readonly files: string[] = [];
  private readonly sources: string[] = [];
  private readonly insert;
  private readonly takeRows;
  private readonly leftRows;
  private seq = 0;
  private indexed = false;

  constructor() {
    // A scratch file: nothing to recover after a crash, so no journal and no syncs.
    this.db.pragma('journal_mode = OFF');
    this.db.pragma('synchronous = OFF');
    this.db.pragma(`cache_size = -${CACHE_KIB}`);
    this.db.pragma('temp_store = FILE');
    this.db.exec(
      'CREATE TABLE rows (seq INTEGER PRIMARY KEY, child INTEGER NOT NULL, pkey TEXT, file INTEGER NOT NULL, line INTEGER NOT NULL, byte_offset INTEGER NOT NULL, hash TEXT NOT NULL, vals TEXT NOT NULL)',
    );
    this.insert = this.db.prepare(
      'INSERT INTO rows (seq, child, pkey, file, line, byte_offset, hash, vals) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.takeRows = this.db.prepare<[number, string], Stored>(
      'DELETE FROM rows WHERE child = ? AND pkey = ? RETURNING seq, file, line, byte_offset, hash, vals, pkey',
    );
    this.leftRows = this.db.prepare<[number], Stored>(
      'SELECT seq, file, line, byte_offset, hash, vals, pkey FROM rows WHERE child = ? ORDER BY seq',
    );
  }

  /** A number for a child source (its rows are stored under it). */
  source(name: string): number {
    return this.sources.push(name) - 1;
  }

  /** A number for a file's name, kept once. */
  file(name: string): number {
    const at = this.files.indexOf(name);
    return at >= 0 ? at : this.files.push(name) - 1;
  }

  /** Stores a batch of rows of child source `child`, each under the parent key it names (undefined: none). */
  add(child: number, file: number, rows: readonly { row: SourceRow; parentKey: string | undefined }[]): void {
    this.db.transaction(() => {
      for (const { row, parentKey } of rows) {
        const p = row.provenance;
        this.insert.run(this.seq++, child, parentKey ?? null, file, p.line, p.byteOffset, p.hash, JSON.stringify(row.values));
      }
    })();
  }

  /** Builds the lookup index, once every row is stored (faster than keeping it up while inserting). */
  ready(): void {
    if (this.indexed) return;
    this.db.exec('CREATE INDEX rows_parent ON rows (child, pkey)');
    this.indexed = true;
  }

  /** Takes out the rows of `child` that name `parentKey`, in file order. */
  take(child: number, parentKey: string): StoredChild[] {
    const got = this.takeRows.all(child, parentKey);
    if (got.length > 1) got.sort((a, b) => a.seq - b.seq);
    return got.map((r) => this.toChild(child, r));
  }

  /** The rows of `child` no parent took, in file order (streamed). */
  *left(child: number): Generator<StoredChild & { parentKey: string | undefined }> {
    for (const r of this.leftRows.iterate(child)) yield { ...this.toChild(child, r), parentKey: r.pkey ?? undefined };
  }

  close(): void {
    try {
      this.db.close();
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  private toChild(child: number, r: Stored): StoredChild {
    const provenance: Provenance = { file: this.files[r.file]!, line: r.line, byteOffset: r.byte_offset, hash: r.hash };
    return { seq: r.seq, row: { source: this.sources[child]!, values: JSON.parse(r.vals) as Values, provenance } };
  }
}
