import { indexOfBytes } from '#core/bytes.ts';
import { MAX_PDF_STREAM_BYTES } from '#core/limits.ts';
import { decoder, Ended, OverBudget } from './pdf-stream-decoders.ts';

/**
 * A decode budget for the compressed streams of a PDF, checked before pdf.js sees the file.
 * pdf.js holds a stream whole once it decodes it (a page's content, a font, an image, an object
 * stream), growing its buffer by doubling, so a 200 KB file of one flate bomb took 800 MB. Here
 * each stream's filters are run once with nothing kept, only counted, and a stream that would
 * expand past the budget is disabled in place: its data is made to end at once (an empty zlib,
 * LZW or run-length stream), so pdf.js reads it as empty and the file's offsets stay as they were.
 *
 * Streams are found by their `stream` keyword after a dictionary, wherever they are, including
 * inside other streams' data (a stream reached only through the cross-reference table is found
 * too). Decoding runs to the filter's own end marker, past the declared /Length, so a wrong
 * length cannot hide data pdf.js would read. Every step of a long PDF would decode the whole
 * file again (about 1.5 s for 50 MB of flate-compressed photos), so a warm isolate remembers
 * what it found for the last few files. Not covered: streams of an encrypted PDF (their bytes
 * are ciphertext until pdf.js decrypts them) and images inlined in a content stream.
 */

export interface StreamCheck {
  /** Streams disabled for expanding past the budget. */
  disabled: number;
}

/** Bytes written at an offset to disable a stream. */
interface Patch {
  at: number;
  values: number[];
}

const STREAM = [0x73, 0x74, 0x72, 0x65, 0x61, 0x6d]; // "stream"
const ENDSTREAM = [0x65, 0x6e, 0x64, 0x73, 0x74, 0x72, 0x65, 0x61, 0x6d]; // "endstream"
// How far back from `stream` its dictionary may begin; a real one is a few hundred bytes.
const MAX_DICT_BYTES = 64 * 1024;
// Input fed to a decoder at a time: as much as cannot overshoot the budget left by more than
// 16 MB whatever the data (a flate bomb's 1032:1 makes 16 KB that much), within these bounds.
const MIN_SLICE = 4 * 1024;
const MAX_SLICE = 64 * 1024;

/** The most each filter can expand its input, to pass over streams too small to reach the budget. */
const MAX_RATIO: Record<string, number> = {
  FlateDecode: 1032,
  LZWDecode: 4096,
  RunLengthDecode: 128,
  ASCIIHexDecode: 1,
  ASCII85Decode: 4,
};
const ABBREVIATIONS: Record<string, string> = {
  Fl: 'FlateDecode',
  LZW: 'LZWDecode',
  RL: 'RunLengthDecode',
  AHx: 'ASCIIHexDecode',
  A85: 'ASCII85Decode',
  DCT: 'DCTDecode',
  CCF: 'CCITTFaxDecode',
};
// Filters whose output pdf.js bounds itself (images of a declared size it checks): the chain ends there.
const IMAGE_FILTERS = new Set(['DCTDecode', 'JPXDecode', 'JBIG2Decode', 'CCITTFaxDecode']);

const isWhite = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
const isRegular = (c: number | undefined) => c !== undefined && !isWhite(c) && !'()<>[]{}/%'.includes(String.fromCharCode(c));

/**
 * Decoding done for one check, in all: past it, the streams left are not decoded but disabled if
 * they could exceed the budget. A real PDF of 50 MB decodes to far less; a file made of streams
 * inside streams could otherwise make every check decode its full budget.
 */
const MAX_CHECKED_BYTES = 16 * MAX_PDF_STREAM_BYTES;

/**
 * Checks every compressed stream of `bytes`, disabling in place those that expand past
 * `maxBytes`; the caller must own the bytes. Brotli streams, which no decoder here can count,
 * are disabled when they are large enough to matter.
 */
export function checkPdfStreams(bytes: Uint8Array, maxBytes = MAX_PDF_STREAM_BYTES): StreamCheck {
  const patches = streamsOverBudget(bytes, maxBytes);
  apply(bytes, patches);
  return { disabled: patches.length };
}

// Files checked lately in this isolate, by their SHA-256: a PDF is read in ranges of pages, one
// step each, and every step would otherwise decode all of the file's streams again.
const RECENT = new Map<string, Patch[]>();
const MAX_RECENT = 16;

/**
 * `checkPdfStreams` for the parse step: a file this isolate checked lately is not decoded again,
 * only patched as it was then (the file's hash, not its name, says it is the same file).
 */
export async function checkPdfStreamsOnce(bytes: Uint8Array): Promise<StreamCheck> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  const key = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
  let patches = RECENT.get(key);
  if (!patches) {
    patches = streamsOverBudget(bytes, MAX_PDF_STREAM_BYTES);
    if (RECENT.size >= MAX_RECENT) RECENT.delete(RECENT.keys().next().value as string);
    RECENT.set(key, patches);
  }
  apply(bytes, patches);
  return { disabled: patches.length };
}

/** The patches that disable every stream of `bytes` that would expand past `maxBytes`. */
function streamsOverBudget(bytes: Uint8Array, maxBytes: number): Patch[] {
  const patches: Patch[] = [];
  const scan: Scan = { floor: 0, endstream: -1, left: Math.max(MAX_CHECKED_BYTES, 2 * maxBytes) };
  for (let at = indexOfBytes(bytes, STREAM); at !== -1; at = indexOfBytes(bytes, STREAM, at + STREAM.length)) {
    const stream = streamAt(bytes, at, scan);
    if (!stream || stream.filters.length === 0) continue;
    if (overBudget(bytes, stream, maxBytes, scan)) patches.push(disabling(stream));
  }
  return patches;
}

function apply(bytes: Uint8Array, patches: readonly Patch[]): void {
  for (const { at, values } of patches) {
    for (let i = 0; i < values.length && at + i < bytes.length; i++) bytes[at + i] = values[i]!;
  }
}

interface Scan {
  /** Where the last `>> stream` ended: no dictionary of a later stream begins before it. */
  floor: number;
  /** The `endstream` found last, reused while it lies ahead. */
  endstream: number;
  /** Bytes the check may still decode. */
  left: number;
}

interface FoundStream {
  filters: string[];
  /** Where the data begins. */
  start: number;
  /** The most data pdf.js may take for it: the larger of the declared length and the next `endstream`. */
  length: number;
  /** The declared /Length, when it is a number in the dictionary (an indirect one is not known here). */
  declared: boolean;
}

/** The stream whose `stream` keyword is at `at`, or null when the keyword is not one (`endstream`, text). */
function streamAt(bytes: Uint8Array, at: number, scan: Scan): FoundStream | null {
  if (isRegular(bytes[at - 1]) || isRegular(bytes[at + STREAM.length])) return null;
  let end = at - 1;
  while (end > scan.floor && isWhite(bytes[end])) end--;
  if (bytes[end] !== 0x3e || bytes[end - 1] !== 0x3e) return null; // ">>"
  const open = dictionaryStart(bytes, end, scan.floor);
  // A later stream's dictionary begins after this keyword: no byte is walked back over twice.
  scan.floor = at + STREAM.length;
  if (open === -1) return null;
  const dict = latin1(bytes, open, end + 1);
  let start = at + STREAM.length;
  if (bytes[start] === 0x0d) start++;
  if (bytes[start] === 0x0a) start++;
  const filters = filtersOf(dict);
  const length = /\/Length\s+(\d{1,10})(?!\s+\d+\s+R)/.exec(dict);
  if (scan.endstream !== bytes.length && scan.endstream < start) {
    const next = indexOfBytes(bytes, ENDSTREAM, start);
    scan.endstream = next === -1 ? bytes.length : next;
  }
  const toEndstream = scan.endstream - start;
  const declared = length ? Number(length[1]) : 0;
  return { filters, start, length: Math.min(bytes.length - start, Math.max(declared, toEndstream)), declared: !!length };
}

/** Where the dictionary that closes with the `>>` ending at `close` opens, matching nested ones; -1 if not found. */
function dictionaryStart(bytes: Uint8Array, close: number, floor: number): number {
  let depth = 0;
  const stop = Math.max(floor, close - MAX_DICT_BYTES);
  for (let i = close; i > stop; i--) {
    if (bytes[i] === 0x3e && bytes[i - 1] === 0x3e) {
      depth++;
      i--;
    } else if (bytes[i] === 0x3c && bytes[i - 1] === 0x3c) {
      depth--;
      i--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

function latin1(bytes: Uint8Array, from: number, to: number): string {
  let out = '';
  for (let i = from; i < to; i += 8192) out += String.fromCharCode(...bytes.subarray(i, Math.min(to, i + 8192)));
  return out;
}

/** The stream's filters in the order they are undone, full names. */
function filtersOf(dict: string): string[] {
  const match = /\/(?:Filter|F)\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/.exec(dict);
  if (!match) return [];
  return (match[1]!.match(/\/[A-Za-z0-9]+/g) ?? []).map((name) => ABBREVIATIONS[name.slice(1)] ?? name.slice(1));
}

/** Whether undoing the stream's filters would produce more than `maxBytes` at any stage. */
function overBudget(bytes: Uint8Array, stream: FoundStream, maxBytes: number, scan: Scan): boolean {
  const chain: string[] = [];
  for (const filter of stream.filters) {
    if (IMAGE_FILTERS.has(filter)) break;
    chain.push(filter);
  }
  if (chain.length === 0) return false;
  if (chain.includes('BrotliDecode')) return stream.length * 1000 > maxBytes;
  if (chain.some((filter) => MAX_RATIO[filter] === undefined)) return false;
  // Too small to reach the budget whatever it holds (a known length cannot be stretched by a fake `endstream`).
  const most = chain.reduce((n, filter) => n * MAX_RATIO[filter]!, stream.length);
  if (stream.declared && most <= maxBytes) return false;
  // The check's own budget is spent: what could exceed the stream budget is not risked.
  if (scan.left <= 0) return true;

  // Stage by stage, each stage's output counted: pdf.js keeps every stage's output whole.
  let first = new Counter(() => {}, maxBytes, scan);
  let sink = first.push;
  for (let i = chain.length - 1; i >= 0; i--) {
    const stage = decoder(chain[i]!, sink);
    if (i === 0) {
      sink = stage;
    } else {
      first = new Counter(stage, maxBytes, scan);
      sink = first.push;
    }
  }
  // Fed from its start to the file's end if need be: the decoders stop at their end markers.
  const data = bytes.subarray(stream.start);
  const ratio = MAX_RATIO[chain[0]!]!;
  try {
    for (let i = 0; i < data.byteLength; ) {
      const slice = Math.min(MAX_SLICE, Math.max(MIN_SLICE, Math.floor((maxBytes - first.total) / ratio)));
      sink(data.subarray(i, i + slice));
      i += slice;
    }
  } catch (error) {
    if (error instanceof OverBudget) return true;
    if (error instanceof Ended) return false;
    throw error;
  }
  return false;
}

/** Counts a stage's input (the output of the stage before it) against the budgets: the stream's and the check's. */
class Counter {
  total = 0;

  constructor(
    private readonly next: (chunk: Uint8Array) => void,
    private readonly maxBytes: number,
    private readonly scan: Scan,
  ) {}

  readonly push = (chunk: Uint8Array): void => {
    this.total += chunk.byteLength;
    this.scan.left -= chunk.byteLength;
    if (this.total > this.maxBytes || this.scan.left < 0) throw new OverBudget();
    this.next(chunk);
  };
}

/** What the start of a stream's data is overwritten with so that its first filter ends at once. */
const END_AT_ONCE: Record<string, number[]> = {
  // Not a zlib header: pdf.js refuses the stream and reads it as empty.
  FlateDecode: [0x00, 0x00],
  // The end code (257) in nine bits: 1000 0000 1...
  LZWDecode: [0x80, 0x80],
  RunLengthDecode: [0x80],
  ASCIIHexDecode: [0x3e],
  ASCII85Decode: [0x7e, 0x3e],
};

/**
 * What makes the stream's first filter end at once, so that pdf.js reads the stream as empty. A
 * Brotli stream is given a header it cannot read: pdf.js fails on it and reads on without it.
 */
function disabling(stream: FoundStream): Patch {
  return { at: stream.start, values: END_AT_ONCE[stream.filters[0] ?? ''] ?? [0x00, 0x00] };
}
