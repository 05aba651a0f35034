import type { AuditRepo } from '#core/db/audit-log.ts';
import type { SweepsDb } from '#core/db/sweeps.ts';
import { stepMessage } from '#core/messages/ingest.ts';
import { namespaceFor } from '#core/namespaces.ts';
import { queueDeliveries } from '#core/webhooks/queue.ts';
import type { PipelineDeps } from './pipeline/deps.ts';
import { failJob, removeDocument } from './pipeline/finish.ts';
import { JOB_MESSAGES } from './pipeline/job-messages.ts';

/** Picked up this many times without finishing, a job fails rather than loop for ever. */
export const MAX_SWEEPS = 3;
const BATCH = 100;

/**
 * The cron sweep: a job untouched for `afterMinutes` lost its messages (an outage longer than
 * QStash's retries, a dead-letter never retried). Its extract step is queued again, which, every
 * write being idempotent, reads what is left or re-queues the batches still pending. After
 * MAX_SWEEPS pick-ups it fails, with its document, as a step that failed every retry does.
 */
export async function sweepStaleJobs(deps: PipelineDeps & { sweeps: SweepsDb }, afterMinutes: number) {
  const stale = await deps.sweeps.staleJobs(afterMinutes, BATCH);
  const requeue = [];
  for (const { id, sweeps, extract_cursor, user_id } of stale) {
    if (sweeps > MAX_SWEEPS) {
      const job = await deps.db.job(id);
      if (job) await failJob(deps, id, job.document, JOB_MESSAGES.workerFailed);
      continue;
    }
    requeue.push(stepMessage(deps.workerUrl, { job_id: id, step: 'extract', from_page: extract_cursor }, user_id));
  }
  if (requeue.length > 0) await deps.queue.publish(requeue);
  if (stale.length > 0) deps.log.info('sweep_jobs', { queued: requeue.length, failed: stale.length - requeue.length });
  return { swept: stale.length };
}

/**
 * Deletions begun `afterMinutes` ago and not finished: a store failed part-way and the DELETE was never sent
 * again. Marked, they are neither listed nor searched, but their vectors, files or rows are still there; they go
 * now, as the DELETE would have taken them. One that fails again is logged and taken up by a later sweep.
 */
export async function sweepUnfinishedDeletions(deps: PipelineDeps & { sweeps: SweepsDb }, afterMinutes: number) {
  let finished = 0;
  const attempt = async (what: string, remove: () => Promise<void>) => {
    try {
      await remove();
      finished++;
    } catch (error) {
      deps.log.error('sweep_deletion_failed', error, { what });
    }
  };
  const documents = await deps.sweeps.unfinishedDocumentDeletions(afterMinutes, BATCH);
  for (const doc of documents) await attempt(`document ${doc.id}`, () => removeDocument(deps, doc));
  const collections = await deps.sweeps.unfinishedCollectionDeletions(afterMinutes, BATCH);
  for (const collection of collections) {
    await attempt(`collection ${collection.id}`, async () => {
      await deps.vectors.deleteNamespace(namespaceFor(collection.id, collection.user_id));
      await deps.store.removeFolder(collection.id);
      await deps.sweeps.deleteCollection(collection.id);
    });
  }
  const taken = documents.length + collections.length;
  if (taken > 0) deps.log.info('sweep_deletions', { finished, taken });
  return { deletions: finished };
}

/** Deliveries older than this and never handed to the queue: the step that made them could not queue them. */
const UNQUEUED_AFTER_MINUTES = 5;

/** Deliveries whose hand-over to the queue failed and was never retried (the job's steps all ended). */
export async function sweepUnqueuedDeliveries(deps: PipelineDeps) {
  const ids = await deps.deliveries.unqueued(UNQUEUED_AFTER_MINUTES, BATCH);
  await queueDeliveries(deps, ids);
  if (ids.length > 0) deps.log.info('sweep_deliveries', { queued: ids.length });
  return { deliveries: ids.length };
}

export interface AuditSweepDeps {
  auditLog: Pick<AuditRepo, 'removeOlderThan'>;
  auditRetentionDays: number;
}

/** Entries removed per statement, and statements per sweep: a backlog (a shorter retention set) goes over a few sweeps. */
const AUDIT_BATCH = 1000;
const AUDIT_BATCHES_PER_SWEEP = 20;

/** The audit log's retention: entries older than AUDIT_RETENTION_DAYS go. Nothing else ever deletes one. */
export async function sweepAuditLog(deps: AuditSweepDeps) {
  let removed = 0;
  for (let batch = 0; batch < AUDIT_BATCHES_PER_SWEEP; batch++) {
    const count = await deps.auditLog.removeOlderThan(deps.auditRetentionDays, AUDIT_BATCH);
    removed += count;
    if (count < AUDIT_BATCH) break;
  }
  return { audit_entries_removed: removed };
}
