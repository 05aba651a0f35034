import { unzlibSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { crc32 } from '../../../workers/ingest/src/parsers/crc32.ts';
import { encodePng, type PngChannels } from '../../../workers/ingest/src/parsers/png.ts';
import { seededBytes } from '../../support/seeded-random.ts';

interface DecodedPng {
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
  pixels: Uint8Array;
  chunkTypes: string[];
}

// A small reference decoder written from the PNG spec, independent of the encoder: it checks every CRC,
// concatenates IDATs, inflates and reverses each row's filter.
function decodePng(png: Uint8Array): DecodedPng {
  expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const chunkTypes: string[] = [];
  const idat: Uint8Array[] = [];
  let width = 0;
  let height = 0;
  let bitDepth = 0;
  let colorType = 0;
  let offset = 8;
  while (offset < png.length) {
    const length = view.getUint32(offset);
    const type = String.fromCharCode(...png.subarray(offset + 4, offset + 8));
    const data = png.subarray(offset + 8, offset + 8 + length);
    const storedCrc = view.getUint32(offset + 8 + length);
    expect(storedCrc, `${type} CRC`).toBe(crc32(png.subarray(offset + 4, offset + 8 + length)));
    chunkTypes.push(type);
    if (type === 'IHDR') {
      const h = new DataView(data.buffer, data.byteOffset, data.byteLength);
      width = h.getUint32(0);
      height = h.getUint32(4);
      bitDepth = data[8] as number;
      colorType = data[9] as number;
      expect([data[10], data[11], data[12]]).toEqual([0, 0, 0]);
    } else if (type === 'IDAT') {
      idat.push(data);
    }
    offset += 12 + length;
  }
  expect(offset).toBe(png.length);
  const joined = new Uint8Array(idat.reduce((n, d) => n + d.length, 0));
  let at = 0;
  for (const d of idat) {
    joined.set(d, at);
    at += d.length;
  }
  const raw = unzlibSync(joined);
  const bpp = ({ 0: 1, 4: 2, 2: 3, 6: 4 } as Record<number, number>)[colorType] as number;
  const stride = width * bpp;
  expect(raw.length).toBe((stride + 1) * height);
  const pixels = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)] as number;
    expect(filter).toBeLessThanOrEqual(4);
    for (let i = 0; i < stride; i++) {
      const x = raw[y * (stride + 1) + 1 + i] as number;
      const a = i >= bpp ? (pixels[y * stride + i - bpp] as number) : 0;
      const b = y > 0 ? (pixels[(y - 1) * stride + i] as number) : 0;
      const c = y > 0 && i >= bpp ? (pixels[(y - 1) * stride + i - bpp] as number) : 0;
      let pred = 0;
      if (filter === 1) pred = a;
      else if (filter === 2) pred = b;
      else if (filter === 3) pred = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      pixels[y * stride + i] = (x + pred) & 0xff;
    }
  }
  return { width, height, bitDepth, colorType, pixels, chunkTypes };
}

function gradient(width: number, height: number, channels: number): Uint8Array {
  const px = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < channels; c++) px[(y * width + x) * channels + c] = (x * 7 + y * 3 + c * 50) & 0xff;
    }
  }
  return px;
}

function widenGray(px: Uint8Array, channels: 1 | 2): Uint8Array {
  const n = px.length / channels;
  const out = new Uint8Array(n * (channels + 2));
  for (let i = 0; i < n; i++) {
    const g = px[i * channels] as number;
    out.set(channels === 1 ? [g, g, g] : [g, g, g, px[i * 2 + 1] as number], i * (channels + 2));
  }
  return out;
}

async function loadSharp() {
  try {
    return (await import('sharp')).default;
  } catch {
    return undefined;
  }
}

describe('encodePng', () => {
  it('computes the standard CRC-32', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    expect(crc32(new TextEncoder().encode('IEND'))).toBe(0xae426082);
  });

  for (const channels of [1, 2, 3, 4] as PngChannels[]) {
    it(`round-trips ${channels}-channel pixels losslessly`, () => {
      for (const [w, h] of [
        [1, 1],
        [37, 23],
        [3, 64],
      ] as const) {
        for (const px of [gradient(w, h, channels), seededBytes(w * h * channels, w + h + channels)]) {
          const png = encodePng(px, w, h, channels);
          const decoded = decodePng(png);
          expect(decoded.chunkTypes).toEqual(['IHDR', 'IDAT', 'IEND']);
          expect([decoded.width, decoded.height, decoded.bitDepth]).toEqual([w, h, 8]);
          expect(decoded.colorType).toBe({ 1: 0, 2: 4, 3: 2, 4: 6 }[channels]);
          expect(decoded.pixels).toEqual(px);
        }
      }
    });
  }

  it('accepts Uint8ClampedArray input', () => {
    const px = new Uint8ClampedArray(gradient(10, 10, 4));
    expect(decodePng(encodePng(px, 10, 10, 4)).pixels).toEqual(new Uint8Array(px));
  });

  it('picks row filters that compress smooth images well below the raw size', () => {
    const px = gradient(256, 256, 3);
    const png = encodePng(px, 256, 256, 3);
    expect(png.length).toBeLessThan(px.length / 20);
    const raw = unzlibSync(png.subarray(8 + 25 + 8, png.length - 12 - 4));
    const filters = new Set(Array.from({ length: 256 }, (_, y) => raw[y * (256 * 3 + 1)]));
    expect([...filters].some((f) => f !== 0)).toBe(true);
  });

  it('is decoded identically by an independent decoder (sharp, when installed)', async (ctx) => {
    const sharp = await loadSharp();
    if (!sharp) return ctx.skip();
    for (const channels of [1, 2, 3, 4] as PngChannels[]) {
      const px = seededBytes(31 * 17 * channels, channels);
      const png = encodePng(px, 31, 17, channels);
      const meta = await sharp(png).metadata();
      expect([meta.width, meta.height, meta.channels]).toEqual([31, 17, channels]);
      // sharp widens grayscale to sRGB on raw output, so expect each gray value three times.
      const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
      const expected = channels === 1 ? widenGray(px, 1) : channels === 2 ? widenGray(px, 2) : px;
      expect(info.channels).toBe(channels <= 2 ? channels + 2 : channels);
      expect(new Uint8Array(data)).toEqual(expected);
    }
  });

  it('rejects inconsistent input with a clear error', () => {
    expect(() => encodePng(new Uint8Array(11), 2, 2, 3)).toThrow(/expected 12/);
    expect(() => encodePng(new Uint8Array(0), 0, 2, 3)).toThrow(/positive integers/);
    expect(() => encodePng(new Uint8Array(4), 1.5, 2, 1)).toThrow(/positive integers/);
    expect(() => encodePng(new Uint8Array(4), 2, 2, 5 as PngChannels)).toThrow(/channels/);
  });
});
