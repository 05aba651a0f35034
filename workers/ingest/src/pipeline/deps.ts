import type { Models } from '../../../../src/adapters/models.ts';
import type { Queue } from '../../../../src/adapters/queue.ts';
import type { ObjectStore } from '../../../../src/adapters/storage.ts';
import type { VectorStore } from '../../../../src/adapters/vectors.ts';
import type { FetchedPage } from '../../../../src/ingest/guarded-fetch.ts';
import type { PipelineDb } from '../pipeline-db.ts';

export interface PipelineDeps {
  db: PipelineDb;
  store: ObjectStore;
  vectors: VectorStore;
  models: Models;
  queue: Queue;
  workerUrl: string;
  batchSize: number;
  /** The SSRF-guarded fetch, for URL sources. */
  fetchUrl: (url: string) => Promise<FetchedPage>;
}

/** A delivery's place among QStash's attempts: the last one records failures instead of retrying. */
export interface Attempt {
  retried: number;
  final: boolean;
}
