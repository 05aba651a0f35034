import { randomUUID } from 'node:crypto';
import { createJobRepo } from '#core/db/jobs.ts';
import { db } from './client.ts';

/**
 * A text document's and its job's rows, as an upload writes them, in a collection or (null) the personal
 * namespace, but with no queue message: the job stays `queued`, for tests of what may be done to it.
 */
export async function queuedJob(userId: string, collectionId: string | null): Promise<{ jobId: string; documentId: string }> {
  const sql = db();
  const documentId = randomUUID();
  const jobId = randomUUID();
  await createJobRepo(sql).insertWithDocument(
    {
      id: documentId,
      collection_id: collectionId,
      user_id: userId,
      name: 'queued.txt',
      source_kind: 'upload',
      source_url: null,
      content_type: 'text/plain',
      doc_type: 'txt',
      size_bytes: 0,
      storage_path: null,
      chunk_size: 1000,
    },
    { id: jobId, user_id: userId, collection_id: collectionId, source: 'queued.txt' },
  );
  return { jobId, documentId };
}
