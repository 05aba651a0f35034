// Split from zip.ts: a head is read before the rest has arrived, by rules of its own (nothing throws), where zip.ts reads a whole archive and trusts none of it.

import { Inflate } from 'fflate';
import { indexOfBytes } from '../bytes.ts';
import {
  centralRecords,
  endRecord,
  entryName,
  findEndOfCentralDirectory,
  INPUT_SLICE,
  LOCAL_BYTES,
  localHeader,
} from './zip-format.ts';

/**
 * A head: the first bytes of an upload, read before the rest has arrived (type detection reads only
 * that). Nothing here throws: what cannot be read is left out, and the whole file decides later.
 */

/** An entry seen in a head; its data may run past the head's end. */
export interface HeadEntry {
  name: string;
  method: number;
  dataStart: number;
  /** Null when the local header defers its sizes to a data descriptor and no directory gave them. */
  compressedSize: number | null;
}

export interface ZipHead {
  entries: HeadEntry[];
  /** The bytes end with a consistent central directory, so they are the whole archive. */
  whole: boolean;
}

/** The entries of a ZIP's head: from its central directory when the head holds it, else by walking the local headers. */
export function listZipHead(bytes: Uint8Array): ZipHead {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const central = wholeArchiveEntries(bytes, view);
  return central ? { entries: central, whole: true } : { entries: localEntries(bytes, view), whole: false };
}

function wholeArchiveEntries(bytes: Uint8Array, view: DataView): HeadEntry[] | null {
  const eocd = findEndOfCentralDirectory(view);
  if (eocd === -1) return null;
  const { count, size, offset } = endRecord(view, eocd);
  if (offset + size !== eocd) return null;
  const entries: HeadEntry[] = [];
  for (const record of centralRecords(bytes, view, offset, count, eocd)) {
    entries.push({
      name: record.name,
      method: record.method,
      dataStart: headEntryAt(bytes, view, record.localOffset)?.dataStart ?? bytes.byteLength,
      compressedSize: record.compressedSize,
    });
  }
  return entries.length === count ? entries : null;
}

function headEntryAt(bytes: Uint8Array, view: DataView, at: number): HeadEntry | null {
  const local = localHeader(bytes, view, at);
  if (!local || local.nameEnd > bytes.byteLength) return null;
  const deferred = (local.flags & 8) !== 0;
  return {
    name: entryName(bytes.subarray(at + 30, local.nameEnd)),
    method: local.method,
    dataStart: local.dataStart,
    compressedSize: deferred ? null : local.compressedSize,
  };
}

// A hostile head could chain empty entries; real Office files have a few hundred.
const MAX_HEAD_ENTRIES = 10_000;

function localEntries(bytes: Uint8Array, view: DataView): HeadEntry[] {
  const entries: HeadEntry[] = [];
  let p = 0;
  while (entries.length < MAX_HEAD_ENTRIES) {
    const entry = headEntryAt(bytes, view, p);
    if (!entry) break;
    entries.push(entry);
    if (entry.compressedSize !== null) {
      p = entry.dataStart + entry.compressedSize;
    } else {
      // Sizes follow the data: find the next header by its signature.
      p = indexOfBytes(bytes, LOCAL_BYTES, entry.dataStart);
      if (p === -1) break;
    }
  }
  return entries;
}

/**
 * Whatever text of an entry lies in the head, inflating at most `cap` bytes of it;
 * `finished` when the entry was read to its end (or could not be read further).
 */
export function readHeadEntryText(bytes: Uint8Array, entry: HeadEntry, cap: number): { text: string; finished: boolean } {
  const end = entry.compressedSize === null ? bytes.byteLength : entry.dataStart + entry.compressedSize;
  const data = bytes.subarray(entry.dataStart, Math.min(end, bytes.byteLength));
  const whole = end <= bytes.byteLength;
  const decoder = new TextDecoder();
  if (entry.method === 0) return { text: decoder.decode(data.subarray(0, cap)), finished: whole };
  if (entry.method !== 8) return { text: '', finished: true };
  const chunks: Uint8Array[] = [];
  let total = 0;
  let ended = false;
  try {
    const inflater = new Inflate((chunk, final) => {
      total += chunk.byteLength;
      if (total > cap) throw new RangeError('entry longer than the cap');
      chunks.push(chunk);
      if (final) ended = true;
    });
    for (let i = 0; i < data.byteLength; i += INPUT_SLICE) {
      const last = whole && entry.compressedSize !== null && i + INPUT_SLICE >= data.byteLength;
      inflater.push(data.subarray(i, i + INPUT_SLICE), last);
    }
  } catch {
    // A broken or oversized stream: judge by what was inflated before it failed.
    ended = true;
  }
  let text = '';
  for (const chunk of chunks) text += decoder.decode(chunk, { stream: true });
  return { text: text + decoder.decode(), finished: ended };
}
