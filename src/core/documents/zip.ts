import { Inflate } from 'fflate';
import { crc32 } from '../../../workers/ingest/src/parsers/png.ts';
import { ParseError } from '../../../workers/ingest/src/parsers/types.ts';

/**
 * Reads a ZIP (the container of DOCX/PPTX/XLSX) without trusting it. The central
 * directory is parsed up front, but an entry is inflated only when a parser asks for it,
 * and inflation stops as soon as it passes the declared size or a cap — a zip bomb's
 * header can lie, so the caps are enforced on the bytes actually produced.
 */

export interface ZipLimits {
  /** More entries than this is not an Office document but an attack or an archive. */
  maxEntries: number;
  /** Sum of the declared uncompressed sizes of all entries. */
  maxDeclaredTotal: number;
  /** Largest entry that may be inflated (an isolate has 128 MB). */
  maxEntryBytes: number;
  /** Bytes inflated over the whole life of the archive, across all reads. */
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
  maxInflatedTotal: 128 * 1024 * 1024,
  maxRatio: 200,
  ratioFloor: 1024 * 1024,
};

export interface ZipArchive {
  /** Entry names in central-directory order. */
  names: string[];
  /** The entry's bytes, or null when there is no such entry. Names match case-insensitively. */
  read(name: string): Uint8Array | null;
  /** The entry as UTF-8 text, or null when there is no such entry. */
  readText(name: string): string | null;
  /** The declared uncompressed size, or null when there is no such entry. */
  size(name: string): number | null;
}

interface Entry {
  name: string;
  method: number;
  flags: number;
  compressedSize: number;
  size: number;
  crc: number;
  localOffset: number;
}

const CORRUPT = 'The file is corrupt: its ZIP container could not be read';
const corrupt = (detail?: string) => new ParseError('corrupt', detail ? `${CORRUPT} (${detail})` : CORRUPT);
const bomb = (detail: string) => new ParseError('unsafe', `The file looks like a zip bomb and was refused: ${detail}`);

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const ZIP64_LOCATOR = 0x07064b50;

function findEndOfCentralDirectory(view: DataView): number {
  // The record is 22 bytes plus a comment of at most 65,535 bytes, at the very end.
  const stop = Math.max(0, view.byteLength - 22 - 65_535);
  for (let i = view.byteLength - 22; i >= stop; i--) {
    if (view.getUint32(i, true) === EOCD) return i;
  }
  return -1;
}

export function openZip(bytes: Uint8Array, overrides: Partial<ZipLimits> = {}): ZipArchive {
  const limits = { ...DEFAULT_ZIP_LIMITS, ...overrides };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const eocd = bytes.byteLength >= 22 ? findEndOfCentralDirectory(view) : -1;
  if (eocd === -1) throw corrupt('no central directory');
  if (eocd >= 20 && view.getUint32(eocd - 20, true) === ZIP64_LOCATOR) {
    // Office never needs ZIP64 for a file under 4 GB; refusing it keeps every size a plain uint32.
    throw new ParseError('unsupported', 'ZIP64 archives are not supported');
  }
  const count = view.getUint16(eocd + 10, true);
  const cdSize = view.getUint32(eocd + 12, true);
  const cdOffset = view.getUint32(eocd + 16, true);
  if (count > limits.maxEntries) throw bomb(`it has ${count} entries (at most ${limits.maxEntries} are allowed)`);
  if (cdOffset + cdSize > eocd) throw corrupt('central directory out of bounds');

  const entries = new Map<string, Entry>();
  const names: string[] = [];
  const utf8 = new TextDecoder('utf-8');
  let declaredTotal = 0;
  let p = cdOffset;
  for (let i = 0; i < count; i++) {
    if (p + 46 > eocd || view.getUint32(p, true) !== CENTRAL) throw corrupt('bad central directory entry');
    const nameLength = view.getUint16(p + 28, true);
    const extraLength = view.getUint16(p + 30, true);
    const commentLength = view.getUint16(p + 32, true);
    if (p + 46 + nameLength > eocd) throw corrupt('bad central directory entry');
    const rawName = utf8.decode(bytes.subarray(p + 46, p + 46 + nameLength));
    const entry: Entry = {
      name: rawName.replace(/\\/g, '/').replace(/^\/+/, ''),
      flags: view.getUint16(p + 8, true),
      method: view.getUint16(p + 10, true),
      crc: view.getUint32(p + 16, true),
      compressedSize: view.getUint32(p + 20, true),
      size: view.getUint32(p + 24, true),
      localOffset: view.getUint32(p + 42, true),
    };
    p += 46 + nameLength + extraLength + commentLength;
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

  let inflatedTotal = 0;

  const dataOf = (entry: Entry): Uint8Array => {
    const at = entry.localOffset;
    if (at + 30 > bytes.byteLength || view.getUint32(at, true) !== LOCAL) throw corrupt(`bad local header for ${entry.name}`);
    const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
    const end = start + entry.compressedSize;
    if (end > bytes.byteLength) throw corrupt(`${entry.name} is truncated`);
    return bytes.subarray(start, end);
  };

  const read = (name: string): Uint8Array | null => {
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
    const data = dataOf(entry);
    let out: Uint8Array;
    if (entry.method === 0) {
      if (entry.compressedSize !== entry.size) throw corrupt(`${entry.name} has inconsistent sizes`);
      out = data;
    } else if (entry.method === 8) {
      out = inflateExactly(data, entry.size, entry.name);
    } else {
      throw new ParseError('unsupported', `The file uses an unsupported ZIP compression method (${entry.method})`);
    }
    inflatedTotal += out.byteLength;
    if (crc32(out) !== entry.crc) throw corrupt(`${entry.name} fails its checksum`);
    return out;
  };

  return {
    names,
    read,
    readText(name) {
      const data = read(name);
      return data === null ? null : utf8.decode(data);
    },
    size(name) {
      return entries.get(name.replace(/^\/+/, '').toLowerCase())?.size ?? null;
    },
  };
}

// DEFLATE's ratio tops out near 1032:1, so one 4 KiB slice of input yields at most ~4 MiB:
// the most a lying entry can overshoot its declared size before we stop.
const INPUT_SLICE = 4 * 1024;

/** Inflates raw DEFLATE data that must produce exactly `size` bytes; stops early when it would produce more. */
function inflateExactly(data: Uint8Array, size: number, name: string): Uint8Array {
  const out = new Uint8Array(size);
  let written = 0;
  const inflater = new Inflate((chunk) => {
    if (written + chunk.byteLength > size) throw bomb(`${name} expands past the size its header declares`);
    out.set(chunk, written);
    written += chunk.byteLength;
  });
  try {
    for (let i = 0; i < data.byteLength; i += INPUT_SLICE) {
      const end = Math.min(data.byteLength, i + INPUT_SLICE);
      inflater.push(data.subarray(i, end), end === data.byteLength);
    }
    if (data.byteLength === 0) inflater.push(data, true);
  } catch (error) {
    if (error instanceof ParseError) throw error;
    throw corrupt(`${name} cannot be decompressed`);
  }
  if (written !== size) throw corrupt(`${name} is shorter than its header declares`);
  return out;
}
