/**
 * The key pass: every legacy key of every source marked in the key index before any row is
 * settled. A relation may point forward (a partner further down the file), so whether its target
 * exists needs every key; and a corrected row is checked against the keys of the rows it does
 * not replace. Neither holds rows: the index keeps 10–24 bytes per distinct key (key-index.ts).
 */
import type { KeyIndex } from '../checks/key-index.js';
import type { PreparedSource } from '../prepare-pipeline.js';
import { formatOf, isSourceRowError, readSourceFile } from '../source/index.js';

/** Marks every legacy key of every source in the index (a format with `scanKeys` reads only the key column). */
export async function keyPass(sources: readonly PreparedSource[], index: KeyIndex, signal: AbortSignal | undefined): Promise<void> {
  for (const s of sources) {
    const { scope, keyColumn } = s.mapping;
    const probe: Record<string, unknown> = {};
    const mark = (raw: string) => {
      probe[keyColumn] = raw;
      const key = s.mapping.key(probe);
      if (key !== undefined) index.mark(scope, key);
    };
    const scanKeys = formatOf(s.def.format).scanKeys;
    for (const f of s.files) {
      if (scanKeys && (await scanKeys(s.def, f, keyColumn, signal, mark))) continue;
      for await (const row of readSourceFile(s.def, f, { requiredColumns: s.mapping.columns, signal, hashRows: false })) {
        if (isSourceRowError(row)) continue;
        const key = s.mapping.key(row.values);
        if (key !== undefined) index.mark(scope, key);
      }
    }
  }
}
