import { invalidRequest } from './errors.ts';

/** The formats Tesseract's Leptonica build reads. */
export type ImageFormat = 'png' | 'jpeg' | 'bmp' | 'webp' | 'pnm';

export interface ImageInfo {
  format: ImageFormat;
  /** Known for the formats whose headers are cheap to read; used to refuse decompression bombs. */
  width?: number;
  height?: number;
}

export interface ImageLimits {
  maxBytes: number;
  maxPixels: number;
  fetchTimeoutMs: number;
}

export const DEFAULT_IMAGE_LIMITS: ImageLimits = { maxBytes: 20 * 1024 * 1024, maxPixels: 60_000_000, fetchTimeoutMs: 15_000 };

/** Reads the format, and where it is cheap the size, from the first bytes. */
export function sniffImage(bytes: Uint8Array): ImageInfo | undefined {
  const at = (i: number) => bytes[i] ?? -1;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length >= 24 && at(0) === 0x89 && at(1) === 0x50 && at(2) === 0x4e && at(3) === 0x47) {
    return { format: 'png', width: view.getUint32(16), height: view.getUint32(20) };
  }
  if (at(0) === 0xff && at(1) === 0xd8 && at(2) === 0xff) return { format: 'jpeg', ...jpegSize(bytes, view) };
  if (bytes.length >= 26 && at(0) === 0x42 && at(1) === 0x4d) {
    return { format: 'bmp', width: Math.abs(view.getInt32(18, true)), height: Math.abs(view.getInt32(22, true)) };
  }
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return { format: 'webp' };
  if (at(0) === 0x50 && at(1) >= 0x31 && at(1) <= 0x36) {
    const header = /^P[1-6]\s+(?:#[^\n]*\s+)*(\d+)\s+(?:#[^\n]*\s+)*(\d+)/.exec(ascii(bytes, 0, Math.min(bytes.length, 256)));
    if (header) return { format: 'pnm', width: Number(header[1]), height: Number(header[2]) };
  }
  return undefined;
}

function ascii(bytes: Uint8Array, start: number, end: number): string {
  return String.fromCharCode(...bytes.subarray(start, end));
}

// The frame size sits in the first SOFn segment; walk the marker segments until it appears.
function jpegSize(bytes: Uint8Array, view: DataView): { width?: number; height?: number } {
  let i = 2;
  while (i + 9 < bytes.length) {
    if (bytes[i] !== 0xff) return {};
    const marker = bytes[i + 1] as number;
    const length = view.getUint16(i + 2);
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) return { height: view.getUint16(i + 5), width: view.getUint16(i + 7) };
    i += 2 + length;
  }
  return {};
}

/** Checks bytes before OCR, so a bad upload is a 400 and not a failed job. */
export function checkImage(bytes: Uint8Array, limits: ImageLimits, param: string): ImageInfo {
  if (bytes.length > limits.maxBytes) {
    throw invalidRequest(`image is ${bytes.length} bytes; the limit is ${limits.maxBytes}`, param, 'image_too_large');
  }
  const info = sniffImage(bytes);
  if (!info) throw invalidRequest('unsupported image format: send PNG, JPEG, BMP, WebP or PNM', param, 'invalid_image_format');
  if (info.width !== undefined && info.height !== undefined) {
    if (info.width < 1 || info.height < 1)
      throw invalidRequest(`image has an empty size (${info.width}x${info.height})`, param, 'invalid_image');
    if (info.width * info.height > limits.maxPixels) {
      throw invalidRequest(
        `image is ${info.width}x${info.height} pixels; the limit is ${limits.maxPixels} pixels`,
        param,
        'image_too_large',
      );
    }
  }
  return info;
}

/**
 * The input tokens OpenAI's tile-based vision models (GPT-4o, GPT-4.1) bill for an image, so that a request
 * with images reports them as OpenAI's usage does: 85 at low detail; else 85 plus 170 for each 512-pixel tile of
 * the image fitted within 2048×2048, then shrunk until its shorter side is at most 768 (never enlarged).
 * A size the header does not give (WebP) is counted as low detail: the least an image costs.
 */
export function imageInputTokens(info: ImageInfo, detail?: string | null): number {
  const base = 85;
  if (detail === 'low' || info.width === undefined || info.height === undefined) return base;
  const fit = Math.min(1, 2048 / Math.max(info.width, info.height));
  const shrink = Math.min(1, 768 / (Math.min(info.width, info.height) * fit));
  const width = Math.floor(info.width * fit * shrink);
  const height = Math.floor(info.height * fit * shrink);
  return base + 170 * Math.ceil(width / 512) * Math.ceil(height / 512);
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * The bytes behind an `image_url`: a base64 data URL, or an http(s) URL on this machine (the devstack
 * serves storage on loopback and has no internet to fetch anything else from).
 */
export async function loadImageUrl(url: string, limits: ImageLimits, param: string): Promise<Uint8Array> {
  if (url.startsWith('data:')) {
    const match = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
    if (!match) throw invalidRequest('malformed data URL', param, 'invalid_image_url');
    if (!/;base64$/i.test(match[2] ?? '')) throw invalidRequest('data URLs must be base64-encoded', param, 'invalid_image_url');
    const payload = (match[3] ?? '').replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(payload))
      throw invalidRequest('data URL is not valid base64', param, 'invalid_image_url');
    if ((payload.length * 3) / 4 > limits.maxBytes + 3) {
      throw invalidRequest(`image is larger than the limit of ${limits.maxBytes} bytes`, param, 'image_too_large');
    }
    return new Uint8Array(Buffer.from(payload, 'base64'));
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidRequest('image_url.url is neither a data URL nor a valid URL', param, 'invalid_image_url');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw invalidRequest(`unsupported image URL scheme ${parsed.protocol}`, param, 'invalid_image_url');
  }
  if (!isLoopback(parsed.hostname)) {
    throw invalidRequest(
      `the devstack only fetches images from this machine (localhost, 127.0.0.0/8, ::1), not ${parsed.hostname}; send a data URL instead`,
      param,
      'invalid_image_url',
    );
  }
  let response: Response;
  try {
    // No redirects: one could lead off this machine.
    response = await fetch(parsed, { redirect: 'manual', signal: AbortSignal.timeout(limits.fetchTimeoutMs) });
  } catch (error) {
    throw invalidRequest(
      `could not fetch the image: ${error instanceof Error ? error.message : String(error)}`,
      param,
      'invalid_image_url',
    );
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw invalidRequest(`fetching the image answered HTTP ${response.status}`, param, 'invalid_image_url');
  }
  return readCapped(response, limits.maxBytes, param);
}

async function readCapped(response: Response, maxBytes: number, param: string): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw invalidRequest(`image is ${declared} bytes; the limit is ${maxBytes}`, param, 'image_too_large');
  }
  if (!response.body) return new Uint8Array(0);
  let total = 0;
  // Throwing here errors the pipe, which cancels the download.
  const capped = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      total += chunk.length;
      if (total > maxBytes) throw invalidRequest(`image is larger than the limit of ${maxBytes} bytes`, param, 'image_too_large');
      controller.enqueue(chunk);
    },
  });
  return new Uint8Array(await new Response(response.body.pipeThrough(capped)).arrayBuffer());
}
