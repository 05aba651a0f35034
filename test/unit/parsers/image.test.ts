import { describe, expect, it } from 'vitest';
import { imageSize, MAX_IMAGE_BYTES, parseImage } from '../../../workers/ingest/src/parsers/image.ts';
import { parseDocument } from '../../../workers/ingest/src/parsers/index.ts';
import type { ExtractedImage } from '../../../workers/ingest/src/parsers/types.ts';
import { fixture } from '../../support/documents.ts';
import { pngBomb } from '../../support/hostile-files.ts';

describe('uploaded images', () => {
  it.each([
    ['table-multi-row-column-cells.png', 'png', 'image/png', 1377, 648],
    ['layout-parser-paper.jpg', 'jpeg', 'image/jpeg', 612, 792],
    ['kitten.webp', 'webp', 'image/webp', 150, 150],
  ] as const)('%s becomes one image, kept as it came', async (name, type, mediaType, width, height) => {
    const bytes = fixture(name);
    const doc = await parseDocument(type, bytes);
    expect(doc.blocks).toEqual([]);
    expect(doc.images).toHaveLength(1);
    const [image] = doc.images as [ExtractedImage];
    expect(image).toMatchObject({ mediaType, width, height, origin: 'image' });
    expect(image.bytes).toEqual(bytes);
  });

  it('hands the image over when the caller stores images as they come', async () => {
    const taken: ExtractedImage[] = [];
    const doc = await parseDocument('jpeg', fixture('layout-parser-paper.jpg'), undefined, {
      onImage: async (image) => {
        taken.push(image);
      },
    });
    expect(doc.images).toEqual([]);
    expect(taken.map((image) => image.mediaType)).toEqual(['image/jpeg']);
  });

  it('reads the size of lossless and extended WebP headers', () => {
    // VP8L: signature 0x2f, then 14-bit width-1 and height-1.
    const lossless = Uint8Array.from(
      [...'RIFF']
        .map((c) => c.charCodeAt(0))
        .concat(
          [0, 0, 0, 0],
          [...'WEBPVP8L'].map((c) => c.charCodeAt(0)),
          [0, 0, 0, 0, 0x2f],
        ),
    );
    const bits = (400 - 1) | ((301 - 1) << 14);
    const full = new Uint8Array(30);
    full.set(lossless);
    new DataView(full.buffer).setUint32(21, bits, true);
    expect(imageSize(full, 'webp')).toEqual({ width: 400, height: 301 });
  });

  it('refuses an image that declares more pixels than a model may decode, without decoding it', () => {
    expect(() => parseImage(pngBomb(100_000, 100_000), 'png')).toThrow(/100000 × 100000 pixels; at most 50 megapixels/);
  });

  it('refuses a corrupt header and an image too large for a vision model', async () => {
    await expect(parseDocument('png', fixture('layout-parser-paper.jpg'))).rejects.toThrow(/could not be read/);
    const huge = new Uint8Array(MAX_IMAGE_BYTES + 1);
    huge.set(fixture('table-multi-row-column-cells.png').subarray(0, 64));
    await expect(parseDocument('png', huge)).rejects.toThrow(/larger than 20 MB/);
  });
});
