import { decode } from 'jpeg-js';
import { encodePng } from './png.ts';

/** Limits that keep one picture from taking a 128 MB worker down. */
const MAX_MEGAPIXELS = 16;
const MAX_MEMORY_MB = 64;

/** A JPEG re-encoded as PNG, so every stored figure is a PNG. Null when it cannot be decoded. */
export function jpegToPng(bytes: Uint8Array): { png: Uint8Array; width: number; height: number } | null {
  try {
    const image = decode(bytes, {
      useTArray: true,
      formatAsRGBA: false,
      maxResolutionInMP: MAX_MEGAPIXELS,
      maxMemoryUsageInMB: MAX_MEMORY_MB,
    });
    return { png: encodePng(image.data, image.width, image.height, 3), width: image.width, height: image.height };
  } catch {
    return null;
  }
}
