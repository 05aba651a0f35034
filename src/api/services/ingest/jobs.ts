import type { Caller } from '#core/caller.ts';
import { isUuid } from '#core/db/client.ts';
import { CANCELLED, type JobRow, type JobStatus } from '#core/db/jobs.ts';
import { conflict, notFound } from '#core/errors.ts';
import type { IngestDeps, Intake } from './intake.ts';

export function createJobs(deps: Pick<IngestDeps, 'access' | 'documents' | 'jobs' | 'purge'>, intake: Intake) {
  const { access, documents, jobs, purge } = deps;

  /** Only the creator sees a job; a restricted key sees only its collection's jobs. */
  async function ownJob(caller: Caller, jobId: string): Promise<JobRow> {
    const job = isUuid(jobId) ? await jobs.findOwn(jobId, caller.id) : undefined;
    if (!job) throw notFound('Job');
    if (!access.keyAllows(caller, job.collection_id)) access.requireUnrestricted(caller);
    return job;
  }

  return {
    async getJob(caller: Caller, jobId: string): Promise<JobRow> {
      return ownJob(caller, jobId);
    },

    /**
     * The caller's own jobs, newest first: all, one collection's, or (collectionId null) the personal
     * namespace's. A key restricted to a collection sees that collection's only.
     */
    async listJobs(
      caller: Caller,
      filter: { collectionId?: string | null; status?: JobStatus; limit: number; offset: number },
    ): Promise<JobRow[]> {
      const restriction = caller.key?.collectionId;
      if (restriction && filter.collectionId !== undefined && filter.collectionId?.toLowerCase() !== restriction) {
        access.requireUnrestricted(caller);
      }
      const collectionId = restriction ?? filter.collectionId;
      if (collectionId && !isUuid(collectionId)) return [];
      return jobs.list(caller.id, { ...filter, collectionId });
    },

    /**
     * Stops the creator's job: it ends `failed`, "Cancelled", at once (with its webhooks), so no later step
     * does anything; then its document goes with whatever was indexed and stored. A step already running
     * takes back what it writes after this (the ingest worker's takeBackIfGone). A document it was to
     * replace stays. Cancelling again answers the same; a job that ended otherwise is 409, and so is a new
     * version already replacing the old document (it ends in a moment).
     */
    async cancel(caller: Caller, jobId: string): Promise<JobRow> {
      const job = await ownJob(caller, jobId);
      const ending = await jobs.cancel(job.job_id, caller.id);
      const now = await ownJob(caller, jobId);
      if (!ending.ended && !(now.status === 'failed' && now.error_message === CANCELLED)) {
        throw conflict(
          now.status === 'processing'
            ? 'The job is replacing the document it is a new version of, and can no longer be cancelled'
            : `The job has already ended (${now.status})`,
        );
      }
      await intake.deliver(ending);
      // Again on a repeated cancel: a purge that failed (an outage) is finished by cancelling again.
      const doc = job.document_id ? await documents.find(job.document_id) : undefined;
      if (doc) await purge(doc);
      return { ...now, document_id: null };
    },
  };
}
