import type { Models } from '#core/adapters/models.ts';
import type { Queue } from '#core/adapters/queue.ts';
import type { ObjectStore } from '#core/adapters/storage.ts';
import type { VectorStore } from '#core/adapters/vectors.ts';
import type { PipelineDb } from '#core/db/ingest-pipeline.ts';
import type { QuotaRepo } from '#core/db/ingest-quota.ts';
import type { UsageRepo } from '#core/db/usage.ts';
import type { DeliveryRepo } from '#core/db/webhook-deliveries.ts';
import type { Logger } from '#core/log.ts';
import type { FetchedPage } from '../guarded-fetch.ts';
import type { DocumentBudget } from './read-range.ts';

export interface PipelineDeps {
  db: PipelineDb;
  /** Webhook deliveries: a job's ending hands its own to the queue. */
  deliveries: DeliveryRepo;
  store: ObjectStore;
  vectors: VectorStore;
  models: Models;
  queue: Queue;
  workerUrl: string;
  batchSize: number;
  /** What one document may yield: characters, chunks, PDF pages (the defaults in src/core/limits.ts unless set). */
  budget?: DocumentBudget;
  /** The owner's daily chunk quota, reserved range by range. */
  quota: Pick<QuotaRepo, 'reserve'> & { perDay: number };
  /** Where the model calls of each batch (embeddings, image descriptions) are recorded; unset: not recorded. */
  usage?: Pick<UsageRepo, 'record'>;
  /** The SSRF-guarded fetch, for URL sources. */
  fetchUrl: (url: string) => Promise<FetchedPage>;
  /** This delivery's logger: its request id, and its job or run. */
  log: Logger;
}
