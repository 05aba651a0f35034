import { call, rag, type Schema } from '../api.ts';

export type Doc = Schema<'Document'>;
export type Job = Schema<'IngestJob'>;
export type Metadata = Schema<'DocumentMetadata'>;

/** The cached lists, keyed by place (null is the personal space): a job's start or end refetches the documents. */
export const documentsKey = (collectionId: string | null) => ['documents', collectionId];
export const jobsKey = (collectionId: string | null) => ['jobs', collectionId];

/** A collection's documents, or (null) the personal space's: the same operations on two sets of routes. */
export function documentsIn(collectionId: string | null) {
  if (collectionId === null) {
    return {
      list: () => call(rag.GET('/ingest/documents')),
      setMetadata: (document_id: string, metadata: Metadata) =>
        call(rag.PATCH('/ingest/documents/{document_id}', { params: { path: { document_id } }, body: { metadata } })),
      remove: (document_id: string) => call(rag.DELETE('/ingest/documents/{document_id}', { params: { path: { document_id } } })),
      passages: (document_id: string, chunk_index: number, around: number) =>
        call(
          rag.GET('/ingest/documents/{document_id}/passages/{chunk_index}', {
            params: { path: { document_id, chunk_index }, query: { around } },
          }),
        ),
    };
  }
  const id = collectionId;
  return {
    list: () => call(rag.GET('/collections/{id}/documents', { params: { path: { id } } })),
    setMetadata: (document_id: string, metadata: Metadata) =>
      call(rag.PATCH('/collections/{id}/documents/{document_id}', { params: { path: { id, document_id } }, body: { metadata } })),
    remove: (document_id: string) =>
      call(rag.DELETE('/collections/{id}/documents/{document_id}', { params: { path: { id, document_id } } })),
    passages: (document_id: string, chunk_index: number, around: number) =>
      call(
        rag.GET('/collections/{id}/documents/{document_id}/passages/{chunk_index}', {
          params: { path: { id, document_id, chunk_index }, query: { around } },
        }),
      ),
  };
}

/** The caller's own jobs in a place: the API lists no one else's. */
export const listJobs = (collectionId: string | null) =>
  call(rag.GET('/ingest/jobs', { params: { query: { collection_id: collectionId ?? 'personal', limit: 100 } } }));

export const cancelJob = (job: Job) =>
  call(rag.POST('/ingest/jobs/{job_id}/cancel', { params: { path: { job_id: job.job_id } } }));

export const addUrl = (collectionId: string | null, url: string) =>
  call(rag.POST('/ingest/url', { body: collectionId ? { url, collection_id: collectionId } : { url } }));
