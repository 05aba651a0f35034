import { deflateRawSync, inflateRawSync, constants as zlib } from 'node:zlib';
import { strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { crc32 } from '../../../workers/ingest/src/parsers/crc32.ts';
import { ParseError } from '../../../workers/ingest/src/parsers/types.ts';
import { openZip } from '../../../workers/ingest/src/parsers/zip.ts';
import { type RawEntry, rawZip } from '../../support/ooxml-files.ts';

const SEGMENT = 64 * 1024 * 1024;

/**
 * Raw DEFLATE of `segments` × 64 MiB of zeros without ever holding that much: one segment is
 * compressed once and ends on a full flush (byte-aligned, history reset), so copies of it chain.
 */
function zerosDeflated(segments: number): Uint8Array {
  const segment = deflateRawSync(Buffer.alloc(SEGMENT), { level: 9, finishFlush: zlib.Z_FULL_FLUSH });
  // A final fixed-Huffman block holding only end-of-block.
  const final = Uint8Array.of(0x03, 0x00);
  const out = new Uint8Array(segment.length * segments + final.length);
  for (let i = 0; i < segments; i++) out.set(segment, i * segment.length);
  out.set(final, segment.length * segments);
  return out;
}

function reasonOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ParseError);
    return (error as ParseError).reason;
  }
  throw new Error('expected a ParseError');
}

describe('openZip', () => {
  it('lists entries and reads them by name, case-insensitively', () => {
    const zip = openZip(
      zipSync({ 'word/document.xml': strToU8('<doc>héllo</doc>'), 'media/a.bin': [Uint8Array.of(1, 2, 3), { level: 0 }] }),
    );
    expect(zip.names).toEqual(['word/document.xml', 'media/a.bin']);
    expect(zip.readText('WORD/Document.xml')).toBe('<doc>héllo</doc>');
    expect([...(zip.read('media/a.bin') ?? [])]).toEqual([1, 2, 3]);
    expect(zip.read('missing.xml')).toBeNull();
    expect(zip.size('media/a.bin')).toBe(3);
  });

  it('checks the expanded data against the CRC', () => {
    const data = deflateRawSync(Buffer.from('hello world'));
    const good = rawZip([{ name: 'a.txt', data, method: 8, size: 11, crc: crc32(strToU8('hello world')) }]);
    expect(openZip(good).readText('a.txt')).toBe('hello world');
    const bad = rawZip([{ name: 'a.txt', data, method: 8, size: 11, crc: 1234 }]);
    expect(() => openZip(bad).read('a.txt')).toThrow(/checksum/);
  });

  it('refuses an archive with too many entries', () => {
    const files: Record<string, Uint8Array> = {};
    for (let i = 0; i < 2001; i++) files[`f${i}.xml`] = strToU8('x');
    expect(reasonOf(() => openZip(zipSync(files, { level: 0 })))).toBe('unsafe');
    expect(() => openZip(zipSync(files, { level: 0 }), { maxEntries: 5000 })).not.toThrow();
  });

  it('builds its test bombs as valid DEFLATE streams', () => {
    const inflated = inflateRawSync(zerosDeflated(2));
    expect(inflated.length).toBe(2 * SEGMENT);
  });

  it('refuses a highly compressible 1 GB entry without inflating it', () => {
    const data = zerosDeflated(15);
    const zip = openZip(rawZip([{ name: 'xl/worksheets/sheet1.xml', data, method: 8, size: 15 * SEGMENT }]));
    const started = performance.now();
    expect(() => zip.read('xl/worksheets/sheet1.xml')).toThrow(/zip bomb.*expand \d+ times/);
    // Inflating 1 GB takes seconds; refusing it from the headers takes nothing.
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('refuses an entry that declares more than the per-entry cap as too large', () => {
    const data = deflateRawSync(Buffer.alloc(40 * 1024 * 1024, 'a'));
    const zip = openZip(rawZip([{ name: 'big.xml', data, method: 8, size: 40 * 1024 * 1024 }]), { maxRatio: Infinity });
    expect(reasonOf(() => zip.read('big.xml'))).toBe('too_large');
  });

  it('stops inflating an entry whose header lies about its size', () => {
    // Declares 1 MiB and a modest ratio, but really holds 1 GiB of zeros.
    const data = zerosDeflated(16);
    const zip = openZip(rawZip([{ name: 'lie.xml', data, method: 8, size: 1024 * 1024 }]), { maxRatio: Infinity });
    const started = performance.now();
    expect(() => zip.read('lie.xml')).toThrow(/expands past the size its header declares/);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('refuses an archive whose entries declare more than the total cap', () => {
    const entries: RawEntry[] = [0, 1].map((i) => ({
      name: `e${i}`,
      data: Uint8Array.of(3, 0),
      method: 8,
      size: 600 * 1024 * 1024,
    }));
    expect(reasonOf(() => openZip(rawZip(entries)))).toBe('unsafe');
  });

  it('caps the bytes inflated over all reads', () => {
    const files: Record<string, Uint8Array> = {};
    for (let i = 0; i < 4; i++) files[`p${i}.xml`] = new Uint8Array(300_000).fill(65 + i);
    const zip = openZip(zipSync(files), { maxInflatedTotal: 1_000_000 });
    for (let i = 0; i < 3; i++) expect(zip.read(`p${i}.xml`)?.length).toBe(300_000);
    expect(reasonOf(() => zip.read('p3.xml'))).toBe('too_large');
  });

  it('reports broken archives as corrupt', () => {
    const good = zipSync({ 'a.xml': strToU8('<a>some text that compresses</a>'.repeat(50)) });
    expect(reasonOf(() => openZip(new Uint8Array(100)))).toBe('corrupt');
    expect(reasonOf(() => openZip(strToU8('PK\u0003\u0004 not really a zip')))).toBe('corrupt');
    // Cut before the central directory ends.
    expect(reasonOf(() => openZip(good.subarray(0, good.length - 10)))).toBe('corrupt');
    // Compressed data damaged in the middle.
    const damaged = good.slice();
    for (let i = 40; i < 60; i++) damaged[i] = 0xff;
    expect(reasonOf(() => openZip(damaged).read('a.xml'))).toBe('corrupt');
    // A stored entry whose sizes disagree.
    const stored = rawZip([{ name: 's.bin', data: new Uint8Array(10), method: 0, size: 20 }]);
    expect(reasonOf(() => openZip(stored).read('s.bin'))).toBe('corrupt');
  });

  it('refuses encrypted entries and unknown compression methods', () => {
    const encrypted = rawZip([{ name: 'a.xml', data: new Uint8Array(12), method: 0, size: 12, flags: 1 }]);
    expect(reasonOf(() => openZip(encrypted).read('a.xml'))).toBe('encrypted');
    const bzip = rawZip([{ name: 'a.xml', data: new Uint8Array(12), method: 12 as 8, size: 12 }]);
    expect(reasonOf(() => openZip(bzip).read('a.xml'))).toBe('unsupported');
  });
});
