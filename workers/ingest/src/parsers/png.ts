import { zlibSync } from 'fflate';
import { crc32 } from './crc32.ts';

/** Raw 8-bit pixels, row-major, `channels` bytes per pixel: gray, gray+alpha, RGB or RGBA. */
export type PngChannels = 1 | 2 | 3 | 4;

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
// PNG colour type for each channel count: grayscale, grayscale+alpha, truecolour, truecolour+alpha.
const COLOR_TYPE: Record<PngChannels, number> = { 1: 0, 2: 4, 3: 2, 4: 6 };
// A PNG dimension is a 31-bit integer; a cap on the total keeps one hostile image from exhausting memory.
const MAX_SIDE = 0x7fffffff;
const MAX_PIXEL_BYTES = 256 * 1024 * 1024;

/**
 * Encodes raw 8-bit pixels as a PNG. Each row gets the filter (None, Sub, Up, Average, Paeth) whose output has
 * the smallest sum of absolute signed bytes — the heuristic the PNG spec recommends, which usually shrinks
 * photographs and screenshots well below filter-0 output.
 */
export function encodePng(
  pixels: Uint8Array | Uint8ClampedArray,
  width: number,
  height: number,
  channels: PngChannels,
): Uint8Array {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`PNG size must be positive integers, got ${width}x${height}`);
  }
  if (width > MAX_SIDE || height > MAX_SIDE) throw new RangeError(`PNG size ${width}x${height} is too large`);
  if (!(channels in COLOR_TYPE)) throw new RangeError(`PNG channels must be 1, 2, 3 or 4, got ${channels}`);
  const stride = width * channels;
  if (stride * height > MAX_PIXEL_BYTES) throw new RangeError(`PNG of ${width}x${height}x${channels} is too large`);
  if (pixels.length !== stride * height) {
    throw new RangeError(
      `PNG pixel buffer has ${pixels.length} bytes, expected ${stride * height} (${width}x${height}x${channels})`,
    );
  }

  const filtered = filterRows(pixels, stride, height, channels);
  const idat = zlibSync(filtered, { level: 6 });

  const ihdr = new Uint8Array(13);
  const view = new DataView(ihdr.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  ihdr[8] = 8; // bit depth
  ihdr[9] = COLOR_TYPE[channels];
  // compression, filter method and interlace are all 0 (deflate, adaptive, none)

  const total = SIGNATURE.length + (12 + 13) + (12 + idat.length) + 12;
  const out = new Uint8Array(total);
  out.set(SIGNATURE, 0);
  let offset = SIGNATURE.length;
  offset = writeChunk(out, offset, 'IHDR', ihdr);
  offset = writeChunk(out, offset, 'IDAT', idat);
  writeChunk(out, offset, 'IEND', new Uint8Array(0));
  return out;
}

function writeChunk(out: Uint8Array, offset: number, type: string, data: Uint8Array): number {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  view.setUint32(offset, data.length);
  for (let i = 0; i < 4; i++) out[offset + 4 + i] = type.charCodeAt(i);
  out.set(data, offset + 8);
  const crcEnd = offset + 8 + data.length;
  view.setUint32(crcEnd, crc32(out, offset + 4, crcEnd));
  return crcEnd + 4;
}

function filterRows(pixels: Uint8Array | Uint8ClampedArray, stride: number, height: number, bpp: number): Uint8Array {
  const out = new Uint8Array((stride + 1) * height);
  // One scratch row per filter type, reused across rows, so choosing costs no allocation per row.
  const candidates = [0, 1, 2, 3, 4].map(() => new Uint8Array(stride));
  for (let y = 0; y < height; y++) {
    const row = y * stride;
    const prev = y > 0 ? row - stride : -1;
    let best = 0;
    let bestScore = Number.POSITIVE_INFINITY;
    for (let type = 0; type < 5; type++) {
      const dst = candidates[type] as Uint8Array;
      let score = 0;
      for (let i = 0; i < stride; i++) {
        const x = pixels[row + i] as number;
        const a = i >= bpp ? (pixels[row + i - bpp] as number) : 0;
        const b = prev >= 0 ? (pixels[prev + i] as number) : 0;
        const c = prev >= 0 && i >= bpp ? (pixels[prev + i - bpp] as number) : 0;
        let v: number;
        switch (type) {
          case 0:
            v = x;
            break;
          case 1:
            v = x - a;
            break;
          case 2:
            v = x - b;
            break;
          case 3:
            v = x - ((a + b) >> 1);
            break;
          default:
            v = x - paeth(a, b, c);
        }
        v &= 0xff;
        dst[i] = v;
        score += v < 128 ? v : 256 - v;
        if (score >= bestScore) break;
      }
      if (score < bestScore) {
        bestScore = score;
        best = type;
      }
    }
    const at = y * (stride + 1);
    out[at] = best;
    out.set(candidates[best] as Uint8Array, at + 1);
  }
  return out;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}
