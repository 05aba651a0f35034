import { Readable } from 'node:stream';
import type { Context } from 'hono';
import { noSuchKey } from './errors.ts';
import type { ObjectStore } from './object-store.ts';

function contentDisposition(download: string): string {
  if (download === '') return 'attachment;';
  const encoded = encodeURIComponent(download);
  return `attachment; filename=${encoded}; filename*=UTF-8''${encoded};`;
}

type ByteRange = { start: number; end: number } | 'unsatisfiable' | undefined;

// One range is all a browser or PDF viewer asks for; anything fancier gets the whole object.
function parseRange(header: string | undefined, size: number): ByteRange {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

/**
 * An object's bytes streamed from disk, with the headers Storage sends: type, length,
 * cache-control, ETag and Last-Modified; Content-Disposition when `download` is given;
 * 304 for a matching If-None-Match and 206 for a byte range.
 */
export async function serveObject(c: Context, objects: ObjectStore, bucketId: string, key: string): Promise<Response> {
  const opened = await objects.open(bucketId, key);
  if (!opened) throw noSuchKey();
  const { record, handle } = opened;
  const { metadata } = record;
  const headers = new Headers({
    'Content-Type': metadata.mimetype,
    'Cache-Control': metadata.cacheControl,
    ETag: metadata.eTag,
    'Last-Modified': new Date(metadata.lastModified).toUTCString(),
    'Accept-Ranges': 'bytes',
  });
  const download = c.req.query('download');
  if (download !== undefined) headers.set('Content-Disposition', contentDisposition(download));

  const range = parseRange(c.req.header('Range'), metadata.size);
  const notModified = c.req.header('If-None-Match') === metadata.eTag;
  if (c.req.method === 'HEAD' || notModified || range === 'unsatisfiable') {
    await handle.close();
    if (notModified) return new Response(null, { status: 304, headers });
    if (range === 'unsatisfiable') {
      headers.set('Content-Range', `bytes */${metadata.size}`);
      return new Response(null, { status: 416, headers });
    }
    headers.set('Content-Length', String(metadata.size));
    return new Response(null, { status: 200, headers });
  }

  const start = range?.start ?? 0;
  const end = range?.end ?? metadata.size - 1;
  headers.set('Content-Length', String(Math.max(0, end - start + 1)));
  if (range) headers.set('Content-Range', `bytes ${start}-${end}/${metadata.size}`);
  if (metadata.size === 0) {
    await handle.close();
    return new Response(null, { status: 200, headers });
  }
  // The stream owns the handle from here and closes it when done or aborted.
  const stream = Readable.toWeb(handle.createReadStream({ start, end })) as unknown as ReadableStream<Uint8Array>;
  return new Response(stream, { status: range ? 206 : 200, headers });
}
