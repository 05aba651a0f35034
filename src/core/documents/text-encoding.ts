import { startsWith } from '../bytes.ts';

/** How a text file's bytes encode its characters; the ones uploads and pages are accepted in. */
export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';

const SAMPLE = 64 * 1024;

/**
 * The encoding in which these bytes read as text, or null for binary data. UTF-8 and
 * BOM-marked UTF-16 are recognised; BOM-less UTF-16 by its pattern of zero bytes; other
 * 8-bit text is reported as windows-1252 (only CSV accepts it). With `complete` false the
 * bytes are a head, so a multi-byte sequence cut at its end is not an error.
 */
export function detectTextEncoding(bytes: Uint8Array, complete = true): TextEncoding | null {
  const sample = bytes.byteLength > SAMPLE ? bytes.subarray(0, SAMPLE) : bytes;
  const cut = !complete || sample !== bytes;
  if (startsWith(sample, [0xef, 0xbb, 0xbf])) return utf8Text(sample.subarray(3), cut) ? 'utf-8' : null;
  if (startsWith(sample, [0xff, 0xfe, 0x00, 0x00]) || startsWith(sample, [0x00, 0x00, 0xfe, 0xff])) return null;
  if (startsWith(sample, [0xff, 0xfe])) return utf16Text(sample.subarray(2), 'utf-16le', cut) ? 'utf-16le' : null;
  if (startsWith(sample, [0xfe, 0xff])) return utf16Text(sample.subarray(2), 'utf-16be', cut) ? 'utf-16be' : null;

  const bomless = bomlessUtf16(sample);
  if (bomless) return utf16Text(sample, bomless, cut) ? bomless : null;
  if (sample.includes(0)) return null;
  if (utf8Text(sample, cut)) return 'utf-8';
  return legacyText(sample) ? 'windows-1252' : null;
}

/** Decodes text in a detected encoding, without its BOM. */
export function decodeText(bytes: Uint8Array, encoding: TextEncoding): string {
  let start = 0;
  if (encoding === 'utf-8' && startsWith(bytes, [0xef, 0xbb, 0xbf])) start = 3;
  if (encoding === 'utf-16le' && startsWith(bytes, [0xff, 0xfe])) start = 2;
  if (encoding === 'utf-16be' && startsWith(bytes, [0xfe, 0xff])) start = 2;
  return decodeAs(bytes.subarray(start), encoding, false);
}

// workerd's TextDecoder is only sure to know UTF-8 and UTF-16LE; the other two are simple enough to do here.
const CP1252_HIGH =
  '\u20ac\ufffd\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\ufffd\u017d\ufffd' +
  '\ufffd\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\ufffd\u017e\u0178';

/** Decodes without BOM handling; `fatal` throws on malformed input. */
export function decodeAs(bytes: Uint8Array, encoding: TextEncoding, fatal: boolean): string {
  if (encoding === 'utf-8' || encoding === 'utf-16le') return new TextDecoder(encoding, { fatal, ignoreBOM: true }).decode(bytes);
  if (encoding === 'utf-16be') {
    const swapped = new Uint8Array(bytes.byteLength & ~1);
    for (let i = 0; i + 1 < bytes.byteLength; i += 2) {
      swapped[i] = bytes[i + 1]!;
      swapped[i + 1] = bytes[i]!;
    }
    if (fatal && bytes.byteLength % 2 === 1) throw new TypeError('odd length');
    return new TextDecoder('utf-16le', { fatal, ignoreBOM: true }).decode(swapped);
  }
  let out = '';
  for (let i = 0; i < bytes.byteLength; i += 8192) {
    const codes = Array.from(bytes.subarray(i, i + 8192), (b) => (b >= 0x80 && b < 0xa0 ? CP1252_HIGH.charCodeAt(b - 0x80) : b));
    out += String.fromCharCode(...codes);
  }
  return out;
}

/** Text has few control characters besides tab, line breaks, form feed and escape, and no NUL. */
export function fewControls(text: string): boolean {
  let bad = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0) return false;
    if ((c < 0x20 && c !== 9 && c !== 10 && c !== 11 && c !== 12 && c !== 13 && c !== 27) || c === 0x7f) bad++;
  }
  return bad <= text.length * 0.01;
}

function utf8Text(bytes: Uint8Array, cut: boolean): boolean {
  let end = bytes.byteLength;
  if (cut) {
    // Drop a sequence cut short by the end of the head.
    for (let back = 1; back <= 3 && back <= end; back++) {
      const b = bytes[end - back]!;
      if ((b & 0xc0) === 0x80) continue;
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      if (need > back) end -= back;
      break;
    }
  }
  try {
    return fewControls(decodeAs(bytes.subarray(0, end), 'utf-8', true));
  } catch {
    return false;
  }
}

function utf16Text(bytes: Uint8Array, encoding: 'utf-16le' | 'utf-16be', cut: boolean): boolean {
  let end = bytes.byteLength;
  if (cut) {
    end -= end % 2;
    const hi = encoding === 'utf-16le' ? bytes[end - 1] : bytes[end - 2];
    if (end >= 2 && hi !== undefined && hi >= 0xd8 && hi <= 0xdb) end -= 2;
  }
  try {
    return fewControls(decodeAs(bytes.subarray(0, end), encoding, true));
  } catch {
    return false;
  }
}

/** UTF-16 without a BOM: mostly-ASCII text has a zero in every other byte, on one side only. */
function bomlessUtf16(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | null {
  const n = Math.min(bytes.byteLength, 8192) & ~1;
  if (n < 4) return null;
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < n; i += 2) {
    if (bytes[i] === 0) evenZeros++;
    if (bytes[i + 1] === 0) oddZeros++;
  }
  const pairs = n / 2;
  if (oddZeros > pairs * 0.4 && evenZeros < pairs * 0.05) return 'utf-16le';
  if (evenZeros > pairs * 0.4 && oddZeros < pairs * 0.05) return 'utf-16be';
  return null;
}

// Bytes windows-1252 leaves undefined: their presence means the data is not text in it.
const UNDEFINED_1252 = new Set([0x81, 0x8d, 0x8f, 0x90, 0x9d]);

function legacyText(bytes: Uint8Array): boolean {
  let high = 0;
  for (const b of bytes) {
    if (UNDEFINED_1252.has(b)) return false;
    if (b >= 0x80) high++;
  }
  // Western text in a legacy code page is mostly ASCII with scattered accented letters.
  return high <= bytes.byteLength * 0.3 && fewControls(decodeAs(bytes, 'windows-1252', false));
}
