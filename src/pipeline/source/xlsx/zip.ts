/**
 * The zip container of a workbook, read with node:zlib alone: its central directory, and one
 * entry's bytes inflated as a stream. Hostile zips are the reason this is here rather than in a
 * library: every entry is inflated under a limit on its inflated size (a zip bomb stops at the
 * limit, in bounded memory), its CRC-32 and length are checked at its end (flipped bytes are a
 * read failure, never a silent value), and every failure is a StagecoachError naming the file
 * and the part, so a damaged workbook ends a read in bounded time instead of hanging it.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { crc32, createInflateRaw } from 'node:zlib';
import { StagecoachError } from '../../../contract/errors.js';

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  crc: number;
  localHeader: number;
}

/** A zip that is not one (or is damaged past reading), named. */
const notAZip = (file: string, why: string) =>
  new StagecoachError('SOURCE_READ_FAILED', `${file}: ${why}: not a workbook (an XLSX file is a zip), expected an XLSX workbook`, { file });

/** The entries of a zip file, from its central directory (zip64 sizes and offsets included). */
export async function zipEntries(path: string, file: string): Promise<Map<string, ZipEntry>> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const tail = Buffer.alloc(Math.min(size, 65_557));
    await fh.read(tail, 0, tail.length, size - tail.length);
    const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    if (eocd < 0 || eocd + 22 > tail.length) throw notAZip(file, 'no zip directory at its end');
    try {
      let count = tail.readUInt16LE(eocd + 10);
      let dirSize = tail.readUInt32LE(eocd + 12);
      let dirOffset = tail.readUInt32LE(eocd + 16);
      if (dirOffset === 0xffffffff || count === 0xffff) {
        const locator = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x06, 0x07]), eocd);
        const record = Buffer.alloc(56);
        await fh.read(record, 0, 56, Number(tail.readBigUInt64LE(locator + 8)));
        count = Number(record.readBigUInt64LE(32));
        dirSize = Number(record.readBigUInt64LE(40));
        dirOffset = Number(record.readBigUInt64LE(48));
      }
      if (dirOffset + dirSize > size) throw notAZip(file, 'its zip directory lies beyond its end (the file was cut short)');
      const dir = Buffer.alloc(dirSize);
      await fh.read(dir, 0, dirSize, dirOffset);
      const entries = new Map<string, ZipEntry>();
      for (let at = 0, i = 0; i < count && at + 46 <= dir.length && dir.readUInt32LE(at) === 0x02014b50; i++) {
        const nameLength = dir.readUInt16LE(at + 28);
        const extraLength = dir.readUInt16LE(at + 30);
        const name = dir.toString('utf8', at + 46, at + 46 + nameLength);
        let compressedSize = dir.readUInt32LE(at + 20);
        let uncompressed = dir.readUInt32LE(at + 24);
        let localHeader = dir.readUInt32LE(at + 42);
        // Zip64: the sizes and offset that do not fit 32 bits follow in the extra field 0x0001, in this order.
        for (let x = at + 46 + nameLength; x + 4 <= at + 46 + nameLength + extraLength; x += 4 + dir.readUInt16LE(x + 2)) {
          if (dir.readUInt16LE(x) !== 1) continue;
          let y = x + 4;
          if (uncompressed === 0xffffffff) (uncompressed = Number(dir.readBigUInt64LE(y))), (y += 8);
          if (compressedSize === 0xffffffff) (compressedSize = Number(dir.readBigUInt64LE(y))), (y += 8);
          if (localHeader === 0xffffffff) localHeader = Number(dir.readBigUInt64LE(y));
        }
        const entry = {
          name,
          method: dir.readUInt16LE(at + 10),
          compressedSize,
          size: uncompressed,
          crc: dir.readUInt32LE(at + 16),
          localHeader,
        };
        // A name stored twice is ambiguous (which part is the sheet?): refused, not resolved by order.
        if (entries.has(name)) throw notAZip(file, `its zip holds ${JSON.stringify(name)} twice`);
        entries.set(name, entry);
        at += 46 + nameLength + extraLength + dir.readUInt16LE(at + 32);
      }
      return entries;
    } catch (err) {
      if (err instanceof StagecoachError) throw err;
      throw notAZip(file, `its zip directory is damaged (${(err as Error).message})`);
    }
  } finally {
    await fh.close();
  }
}

/** What reading one entry needs to say where a failure is, and when to stop. */
export interface EntryRead {
  file: string;
  /** Inflated bytes past which the read stops. */
  maxBytes: number;
  /** The error for an entry inflating past `maxBytes` (the caller names the limit as the user sets it). */
  tooLarge: () => Error;
  signal?: AbortSignal | undefined;
}

/**
 * The text of one zip entry, streamed as UTF-8, inflated under a limit and checked (CRC-32 and
 * length) at its end. Breaking out of the loop stops the inflate and closes the file.
 */
export async function* entryText(path: string, entry: ZipEntry, read: EntryRead): AsyncGenerator<string> {
  const part = `${read.file}: the workbook part ${entry.name}`;
  const damaged = (why: string) =>
    new StagecoachError(
      'SOURCE_READ_FAILED',
      `${part} is damaged (${why}): the workbook cannot be read, expected an intact XLSX workbook: open it in Excel, save it again and retry`,
      { file: read.file },
    );
  if (entry.method !== 0 && entry.method !== 8) throw damaged(`compression method ${entry.method}, expected deflate or none`);
  const fh = await open(path, 'r');
  const local = Buffer.alloc(30);
  try {
    await fh.read(local, 0, 30, entry.localHeader);
  } finally {
    await fh.close();
  }
  if (local.readUInt32LE(0) !== 0x04034b50) throw damaged('no local header where the zip directory says it begins');
  if (entry.compressedSize === 0) {
    if (entry.size !== 0) throw damaged(`no stored bytes, where its zip directory says ${entry.size} inflated`);
    return;
  }
  const start = entry.localHeader + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
  const raw = createReadStream(path, { start, end: start + entry.compressedSize - 1 });
  // 64 KiB chunks rather than zlib's 16: a quarter of the per-chunk work on a sheet of hundreds of MB.
  const bytes = entry.method === 8 ? raw.pipe(createInflateRaw({ chunkSize: 64 * 1024 })) : raw;
  raw.on('error', (err) => bytes.destroy(err));
  const decoder = new StringDecoder('utf8');
  let length = 0;
  let crc = 0;
  try {
    for await (const chunk of bytes as AsyncIterable<Buffer>) {
      read.signal?.throwIfAborted();
      length += chunk.length;
      if (length > read.maxBytes) throw read.tooLarge();
      crc = crc32(chunk, crc);
      yield decoder.write(chunk);
    }
  } catch (err) {
    if (err instanceof StagecoachError || read.signal?.aborted) throw err;
    throw damaged((err as Error).message);
  } finally {
    raw.destroy();
    bytes.destroy();
  }
  if (length !== entry.size) throw damaged(`${length} bytes inflated, where its zip directory says ${entry.size}`);
  if (crc >>> 0 !== entry.crc) throw damaged('its CRC-32 does not match its zip directory');
  const rest = decoder.end();
  if (rest) yield rest;
}
