import type { ImageType } from '#core/documents/detect-type.ts';
import type { DocumentSource } from './index.ts';
import { imageInfo } from './ooxml.ts';
import { type ExtractedImage, type ImageMediaType, type ParsedDocument, ParseError } from './types.ts';

/**
 * An uploaded image is one image chunk, described by the vision model (which reads its text, as it
 * does a scanned page's). It is never decoded here: its header gives its size, and it is stored and
 * sent as it came.
 */

/** The most a vision model takes in one image (OpenAI's and the devstack's limit). */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
/**
 * Pixels an image may declare. A few kilobytes of PNG can declare 100,000 × 100,000 pixels, which
 * whatever decodes it (the model's server) would have to hold; a 50-megapixel photograph is the most
 * a phone takes.
 */
export const MAX_IMAGE_PIXELS = 50_000_000;

const MEDIA_TYPES: Record<ImageType, ImageMediaType> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' };
const CORRUPT = 'The image could not be read: it may be corrupt';

export function parseImage(
  bytes: Uint8Array,
  type: ImageType,
  source: DocumentSource = {},
): Promise<ParsedDocument> | ParsedDocument {
  if (bytes.byteLength > MAX_IMAGE_BYTES) {
    throw new ParseError('too_large', `The image is larger than ${MAX_IMAGE_BYTES / 2 ** 20} MB, the most a vision model reads`);
  }
  const size = imageSize(bytes, type);
  if (!size || size.width < 1 || size.height < 1) throw new ParseError('corrupt', CORRUPT);
  if (size.width * size.height > MAX_IMAGE_PIXELS) {
    throw new ParseError(
      'too_large',
      `The image is ${size.width} × ${size.height} pixels; at most ${MAX_IMAGE_PIXELS / 1_000_000} megapixels can be read`,
    );
  }
  const image: ExtractedImage = {
    bytes: source.transferBytes ? bytes : bytes.slice(),
    mediaType: MEDIA_TYPES[type],
    ...size,
    origin: 'image',
  };
  const doc: ParsedDocument = { blocks: [], images: [], warnings: [] };
  if (!source.onImage) return { ...doc, images: [image] };
  return source.onImage(image).then(() => doc);
}

/** The pixel size an image's header declares, or null when the header is not the type's. */
export function imageSize(bytes: Uint8Array, type: ImageType): { width: number; height: number } | null {
  if (type === 'webp') return webpSize(bytes);
  const info = imageInfo(bytes);
  return info && info.format === type ? { width: info.width, height: info.height } : null;
}

/** A WebP's size, from its first chunk: lossy (VP8), lossless (VP8L) or extended (VP8X). */
function webpSize(bytes: Uint8Array): { width: number; height: number } | null {
  if (bytes.byteLength < 30) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const chunk = String.fromCharCode(...bytes.subarray(12, 16));
  if (chunk === 'VP8 ') {
    // A key frame's start code, then 14-bit width and height.
    if (bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a) return null;
    return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
  }
  if (chunk === 'VP8L') {
    if (bytes[20] !== 0x2f) return null;
    const bits = view.getUint32(21, true);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X') {
    const width = 1 + (bytes[24]! | (bytes[25]! << 8) | (bytes[26]! << 16));
    const height = 1 + (bytes[27]! | (bytes[28]! << 8) | (bytes[29]! << 16));
    return { width, height };
  }
  return null;
}
