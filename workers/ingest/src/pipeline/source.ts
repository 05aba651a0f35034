import type { DocumentRow } from '#core/db/documents.ts';
import { CONTENT_TYPES, type DocType, detectUploadType, TYPE_BY_MEDIA, typeFromExtension } from '#core/documents/detect-type.ts';
import { documentFolder, namespaceFor } from '#core/namespaces.ts';
import { ParseError } from '../parsers/types.ts';
import type { PipelineDeps } from './deps.ts';

export interface Source {
  type: DocType;
  bytes: Uint8Array;
  /** The Content-Type header of a fetched page, for its charset. */
  contentType: string | null;
  url?: string;
}

/**
 * The document's bytes and type: the stored original, or the page fetched now. A fetched
 * page is stored too, so that later steps (the next pages of a PDF) read the same bytes.
 */
export async function loadSource(deps: PipelineDeps, doc: DocumentRow): Promise<Source> {
  if (doc.storage_path) {
    const bytes = await deps.store.get(doc.storage_path);
    if (!doc.doc_type) throw new ParseError('unsupported', 'The file type is not supported');
    return { type: doc.doc_type, bytes, contentType: doc.content_type };
  }

  // A refused or failed fetch reaches the step as it is: steps.ts words it, or retries a DNS outage.
  const page = await deps.fetchUrl(doc.source_url as string);
  const type = typeOfPage(page.contentType, page.url, page.bytes);
  const key = `${documentFolder(namespaceFor(doc.collection_id, doc.user_id), doc.id)}/original.${type}`;
  await deps.store.put(key, viewsOf(page.bytes), page.contentType ?? CONTENT_TYPES[type]);
  await deps.db.updateFetched(doc.id, {
    content_type: CONTENT_TYPES[type],
    doc_type: type,
    size_bytes: page.bytes.byteLength,
    storage_path: key,
  });
  doc.storage_path = key;
  doc.doc_type = type;
  return { type, bytes: page.bytes, contentType: page.contentType, url: page.url };
}

/**
 * The bytes as a stream of views into them, taken as the upload sends them, so that the page is
 * still held once: given the bytes themselves, the runtime's fetch copied them whole before sending
 * (measured in workerd: a 40 MB body took 42 MB more; streamed in views, 8 MB).
 */
export function viewsOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (at >= bytes.byteLength) return controller.close();
        const end = Math.min(bytes.byteLength, at + UPLOAD_PIECE);
        controller.enqueue(bytes.subarray(at, end));
        at = end;
      },
    },
    { highWaterMark: 0 },
  );
}

const UPLOAD_PIECE = 64 * 1024;

/** A media type as servers send it; anything else in the header is not repeated to the user. */
const MEDIA_TYPE = /^[a-z0-9][\w.+-]{0,63}\/[\w.+-]{1,127}$/;

/** A page says what it is in Content-Type; the URL's extension decides for generic types. The bytes must agree. */
export function typeOfPage(contentType: string | null, url: string, bytes: Uint8Array): DocType {
  const media = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const fromPath = typeFromExtension(new URL(url).pathname);
  const type = TYPE_BY_MEDIA[media] ?? (media === '' || media === 'application/octet-stream' ? fromPath : null);
  if (!type) {
    throw new ParseError(
      'unsupported',
      `The URL serves ${MEDIA_TYPE.test(media) ? media : 'an unknown type'}, which cannot be ingested`,
    );
  }
  if (type === 'html') return type;
  const check = detectUploadType(`page.${type}`, bytes, true);
  if (!check.ok) throw new ParseError('unsupported', `The URL's content does not match its declared type: ${check.reason}`);
  return check.type;
}
