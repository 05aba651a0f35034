import { Inflate } from 'fflate';
import {
  centralRecords,
  type Entry,
  endRecord,
  findEndOfCentralDirectory,
  INPUT_SLICE,
  localHeader,
  utf8,
  ZIP64_LOCATOR,
} from '#core/documents/zip-format.ts';
import { MAX_PACKAGE_INFLATED_BYTES } from '#core/limits.ts';
import { crc32 } from './crc32.ts';
import { ParseError } from './parse-error.ts';

/**
 * Reads a ZIP (the container of DOCX/PPTX/XLSX) without trusting it. The central
 * directory is parsed up front, but an entry is inflated only when a parser asks for it,
 * and inflation stops as soon as it passes the declared size or a cap — a zip bomb's
 * header can lie, so the caps are enforced on the bytes actually produced. A large part can be
 * read in pieces (`chunks`), so that it is never held whole. Type detection
 * reads only an upload's head, which may end before the central directory: zip-head.ts serves it.
 */

export interface ZipLimits {
  /** More entries than this is not an Office document but an attack or an archive. */
  maxEntries: number;
  /** Sum of the declared uncompressed sizes of all entries. */
  maxDeclaredTotal: number;
  /** Largest entry that may be inflated (an isolate has 128 MB). */
  maxEntryBytes: number;
  /** Bytes inflated over the whole life of the archive, across all reads, stored entries included. */
  maxInflatedTotal: number;
  /** Uncompressed/compressed ratio above which a large entry is treated as a bomb. */
  maxRatio: number;
  /** Entries smaller than this are exempt from the ratio check (tiny XML compresses well). */
  ratioFloor: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntries: 2_000,
  maxDeclaredTotal: 1024 * 1024 * 1024,
  maxEntryBytes: 32 * 1024 * 1024,
  maxInflatedTotal: MAX_PACKAGE_INFLATED_BYTES,
  maxRatio: 200,
  ratioFloor: 1024 * 1024,
};

export interface ZipArchive {
  /** Entry names in central-directory order. */
  names: string[];
  /** The entry's bytes, or null when there is no such entry. Names match case-insensitively. */
  read(name: string): Uint8Array | null;
  /**
   * The entry's bytes in pieces as they inflate (a few MB at most each), under the same checks as
   * `read`, the checksum last; null when there is no such entry.
   */
  chunks(name: string): Iterable<Uint8Array> | null;
  /** The entry as UTF-8 text, or null when there is no such entry. */
  readText(name: string): string | null;
  /** The declared uncompressed size, or null when there is no such entry. */
  size(name: string): number | null;
}

const CORRUPT = 'The file is corrupt: its ZIP container could not be read';
const corrupt = (detail?: string) => new ParseError('corrupt', detail ? `${CORRUPT} (${detail})` : CORRUPT);
const bomb = (detail: string) => new ParseError('unsafe', `The file looks like a zip bomb and was refused: ${detail}`);

export function openZip(bytes: Uint8Array, overrides: Partial<ZipLimits> = {}): ZipArchive {
  const limits = { ...DEFAULT_ZIP_LIMITS, ...overrides };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const eocd = findEndOfCentralDirectory(view);
  if (eocd === -1) throw corrupt('no central directory');
  if (eocd >= 20 && view.getUint32(eocd - 20, true) === ZIP64_LOCATOR) {
    // Office never needs ZIP64 for a file under 4 GB; refusing it keeps every size a plain uint32.
    throw new ParseError('unsupported', 'ZIP64 archives are not supported');
  }
  const { count, size: cdSize, offset: cdOffset } = endRecord(view, eocd);
  if (count > limits.maxEntries) throw bomb(`it has ${count} entries (at most ${limits.maxEntries} are allowed)`);
  if (cdOffset + cdSize > eocd) throw corrupt('central directory out of bounds');

  const entries = new Map<string, Entry>();
  const names: string[] = [];
  let declaredTotal = 0;
  let records = 0;
  for (const entry of centralRecords(bytes, view, cdOffset, count, eocd)) {
    records++;
    if (entry.compressedSize === 0xffffffff || entry.size === 0xffffffff || entry.localOffset === 0xffffffff) {
      throw new ParseError('unsupported', 'ZIP64 archives are not supported');
    }
    declaredTotal += entry.size;
    if (declaredTotal > limits.maxDeclaredTotal) {
      throw bomb(`its entries declare more than ${Math.round(limits.maxDeclaredTotal / 2 ** 20)} MB in total`);
    }
    const key = entry.name.toLowerCase();
    if (entry.name.endsWith('/') || entries.has(key)) continue;
    entries.set(key, entry);
    names.push(entry.name);
  }
  if (records < count) throw corrupt('bad central directory entry');

  let inflatedTotal = 0;

  const dataOf = (entry: Entry): Uint8Array => {
    const local = localHeader(bytes, view, entry.localOffset);
    if (!local) throw corrupt(`bad local header for ${entry.name}`);
    const end = local.dataStart + entry.compressedSize;
    if (end > bytes.byteLength) throw corrupt(`${entry.name} is truncated`);
    return bytes.subarray(local.dataStart, end);
  };

  /** The entry, once it passed the checks that its headers allow before anything is inflated. */
  const checked = (name: string): Entry | null => {
    const entry = entries.get(name.replace(/^\/+/, '').toLowerCase());
    if (!entry) return null;
    if (entry.flags & 1) throw new ParseError('encrypted', 'The file is password-protected');
    if (entry.size > limits.ratioFloor && entry.size / Math.max(1, entry.compressedSize) > limits.maxRatio) {
      throw bomb(`${entry.name} would expand ${Math.round(entry.size / Math.max(1, entry.compressedSize))} times`);
    }
    if (entry.size > limits.maxEntryBytes) {
      throw new ParseError(
        'too_large',
        `The document is too large to process: its part ${entry.name} expands to more than ${Math.round(limits.maxEntryBytes / 2 ** 20)} MB`,
      );
    }
    if (inflatedTotal + entry.size > limits.maxInflatedTotal) {
      throw new ParseError('too_large', 'The document is too large to process: its contents expand past the memory budget');
    }
    if (entry.method === 0 && entry.compressedSize !== entry.size) throw corrupt(`${entry.name} has inconsistent sizes`);
    if (entry.method !== 0 && entry.method !== 8) {
      throw new ParseError('unsupported', `The file uses an unsupported ZIP compression method (${entry.method})`);
    }
    return entry;
  };

  const read = (name: string): Uint8Array | null => {
    const entry = checked(name);
    if (!entry) return null;
    const data = dataOf(entry);
    const out = entry.method === 0 ? data : inflateExactly(data, entry.size, entry.name);
    inflatedTotal += out.byteLength;
    if (crc32(out) !== entry.crc) throw corrupt(`${entry.name} fails its checksum`);
    return out;
  };

  function* pieces(entry: Entry): Generator<Uint8Array> {
    const data = dataOf(entry);
    let crc = 0;
    const source = entry.method === 0 ? storedPieces(data) : inflatePieces(data, entry.size, entry.name);
    for (const piece of source) {
      inflatedTotal += piece.byteLength;
      crc = crc32(piece, 0, piece.byteLength, crc);
      yield piece;
    }
    if (crc !== entry.crc) throw corrupt(`${entry.name} fails its checksum`);
  }

  return {
    names,
    read,
    chunks(name) {
      const entry = checked(name);
      return entry && pieces(entry);
    },
    readText(name) {
      const data = read(name);
      return data === null ? null : utf8.decode(data);
    },
    size(name) {
      return entries.get(name.replace(/^\/+/, '').toLowerCase())?.size ?? null;
    },
  };
}

/** Inflates raw DEFLATE data that must produce exactly `size` bytes; stops early when it would produce more. */
function inflateExactly(data: Uint8Array, size: number, name: string): Uint8Array {
  const out = new Uint8Array(size);
  let written = 0;
  for (const piece of inflatePieces(data, size, name)) {
    out.set(piece, written);
    written += piece.byteLength;
  }
  return out;
}

/** A stored entry in views of its bytes, so that a reader of pieces gets pieces. */
function* storedPieces(data: Uint8Array): Generator<Uint8Array> {
  for (let i = 0; i < data.byteLength; i += 64 * 1024) yield data.subarray(i, Math.min(data.byteLength, i + 64 * 1024));
}

/**
 * Inflates raw DEFLATE data that must produce exactly `size` bytes, a piece per slice of input
 * (at most ~4 MiB each); stops when it would produce more.
 */
function* inflatePieces(data: Uint8Array, size: number, name: string): Generator<Uint8Array> {
  const ready: Uint8Array[] = [];
  let written = 0;
  const inflater = new Inflate((chunk) => {
    if (written + chunk.byteLength > size) throw bomb(`${name} expands past the size its header declares`);
    written += chunk.byteLength;
    if (chunk.byteLength > 0) ready.push(chunk);
  });
  const push = (slice: Uint8Array, final: boolean) => {
    try {
      inflater.push(slice, final);
    } catch (error) {
      if (error instanceof ParseError) throw error;
      throw corrupt(`${name} cannot be decompressed`);
    }
  };
  if (data.byteLength === 0) push(data, true);
  for (let i = 0; i < data.byteLength; i += INPUT_SLICE) {
    const end = Math.min(data.byteLength, i + INPUT_SLICE);
    push(data.subarray(i, end), end === data.byteLength);
    // Handed on before the next slice is inflated: the entry is never whole in memory.
    while (ready.length > 0) yield ready.shift() as Uint8Array;
  }
  while (ready.length > 0) yield ready.shift() as Uint8Array;
  if (written !== size) throw corrupt(`${name} is shorter than its header declares`);
}
