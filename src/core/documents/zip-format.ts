// Split out of zip.ts: the records as the format lays them out, read alike by the whole-archive reader (zip.ts) and a head's (zip-head.ts).

import { startsWith } from '../bytes.ts';

/** A central-directory record: where an entry is, how it is stored, and what it declares. */
export interface Entry {
  name: string;
  method: number;
  flags: number;
  compressedSize: number;
  size: number;
  crc: number;
  localOffset: number;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
export const ZIP64_LOCATOR = 0x07064b50;
// The same signatures as bytes, the way they stand at the start of a file.
export const LOCAL_BYTES = [0x50, 0x4b, 0x03, 0x04];
const EMPTY_ARCHIVE_BYTES = [0x50, 0x4b, 0x05, 0x06];

/** Whether a file starts the way a ZIP does: with its first entry, or, when it has none, the end record. */
export function looksLikeZip(head: Uint8Array): boolean {
  return startsWith(head, LOCAL_BYTES) || startsWith(head, EMPTY_ARCHIVE_BYTES);
}

export function findEndOfCentralDirectory(view: DataView): number {
  // The record is 22 bytes plus a comment of at most 65,535 bytes, at the very end.
  const stop = Math.max(0, view.byteLength - 22 - 65_535);
  for (let i = view.byteLength - 22; i >= stop; i--) {
    if (view.getUint32(i, true) === EOCD) return i;
  }
  return -1;
}

export function endRecord(view: DataView, eocd: number): { count: number; size: number; offset: number } {
  return {
    count: view.getUint16(eocd + 10, true),
    size: view.getUint32(eocd + 12, true),
    offset: view.getUint32(eocd + 16, true),
  };
}

export const utf8 = new TextDecoder('utf-8');

export function entryName(raw: Uint8Array): string {
  return utf8.decode(raw).replace(/\\/g, '/').replace(/^\/+/, '');
}

/** The central directory's first `count` records from `offset`; ends early at one that is malformed. */
export function* centralRecords(
  bytes: Uint8Array,
  view: DataView,
  offset: number,
  count: number,
  eocd: number,
): Generator<Entry> {
  let p = offset;
  for (let i = 0; i < count; i++) {
    if (p + 46 > eocd || view.getUint32(p, true) !== CENTRAL) return;
    const nameLength = view.getUint16(p + 28, true);
    if (p + 46 + nameLength > eocd) return;
    yield {
      name: entryName(bytes.subarray(p + 46, p + 46 + nameLength)),
      flags: view.getUint16(p + 8, true),
      method: view.getUint16(p + 10, true),
      crc: view.getUint32(p + 16, true),
      compressedSize: view.getUint32(p + 20, true),
      size: view.getUint32(p + 24, true),
      localOffset: view.getUint32(p + 42, true),
    };
    p += 46 + nameLength + view.getUint16(p + 30, true) + view.getUint16(p + 32, true);
  }
}

interface LocalHeader {
  flags: number;
  method: number;
  compressedSize: number;
  nameEnd: number;
  dataStart: number;
}

export function localHeader(bytes: Uint8Array, view: DataView, at: number): LocalHeader | null {
  if (at + 30 > bytes.byteLength || view.getUint32(at, true) !== LOCAL) return null;
  const nameEnd = at + 30 + view.getUint16(at + 26, true);
  return {
    flags: view.getUint16(at + 6, true),
    method: view.getUint16(at + 8, true),
    compressedSize: view.getUint32(at + 18, true),
    nameEnd,
    dataStart: nameEnd + view.getUint16(at + 28, true),
  };
}

// DEFLATE's ratio tops out near 1032:1, so one 4 KiB slice of input yields at most ~4 MiB:
// the most a lying entry can overshoot its declared size before we stop.
export const INPUT_SLICE = 4 * 1024;
