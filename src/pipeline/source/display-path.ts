/** How a path is shown in provenance and messages, the same in every part of the pipeline. */
import { isAbsolute, relative } from 'node:path';

/** A path for messages: relative to the working folder when below it, else absolute. */
export function displayPath(absolute: string): string {
  const rel = relative(process.cwd(), absolute);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : absolute;
}
