import type { Queue } from '#core/adapters/queue.ts';
import type { Caller } from '#core/caller.ts';
import type { AdminJobRow, AdminRepo, JobState } from '#core/db/admin.ts';
import { isUuid } from '#core/db/client.ts';
import { conflict, forbidden, notFound, unavailable } from '#core/errors.ts';
import type { Logger } from '#core/log.ts';
import { stepMessage } from '#core/messages/ingest.ts';
import { countDeadLetters } from '#core/qstash/dead-letters.ts';
import type { ModelPriceTable } from '../config.ts';
import type { AdminJobView, AdminOverview, AdminUserView } from '../schemas/admin.ts';
import type { Audit } from './audit.ts';
import type { Accepted } from './ingest/index.ts';
import { costUsd, usageWindow } from './usage.ts';

/**
 * Unfinished and untouched this long, a job is stuck: its steps take seconds, and a retry's message must outlive
 * QStash's deduplication window (10 minutes), which would otherwise drop it as the message already sent.
 */
export const STUCK_AFTER_MINUTES = 15;
const DEAD_LETTERS_TIMEOUT_MS = 2_000;

/** Only a URL job can be started again: a failed job's document and stored original are removed with it. */
const isUrl = (source: string) => /^https?:\/\//i.test(source);
const NOT_RETRYABLE_UPLOAD =
  'A failed upload cannot be retried: its stored original was removed when it failed; the file must be uploaded again';

export interface AdminDeps {
  repo: AdminRepo;
  audit: Audit;
  /** Null when ingestion is disabled. */
  queue: Queue | null;
  workerUrl: string | null;
  /** QStash's address and token, to count its dead-letter queue; null without a token. */
  qstash: { url: string; token: string } | null;
  prices: ModelPriceTable | undefined;
  /** Starts a URL's ingestion again as `owner` (their access and quota), for a failed URL job. */
  ingestUrl: (owner: Caller, collectionId: string | undefined, url: string) => Promise<Accepted>;
  log: Logger;
}

/** The admin page: counts, users and their usage, stuck and failed jobs across every user, and a retry. */
export function createAdminService(deps: AdminDeps) {
  const { repo } = deps;

  const requireAdmin = (caller: Caller) => {
    if (!caller.isAdmin) throw forbidden('Only an administrator can do this');
  };

  const retryNote = (job: AdminJobRow): string | null => {
    if (job.status === 'failed') return isUrl(job.source) ? null : NOT_RETRYABLE_UPLOAD;
    return null;
  };
  const view = (job: AdminJobRow): AdminJobView => {
    const note = retryNote(job);
    return { ...job, retryable: note === null, retry_note: note };
  };

  async function deadLetters(): Promise<AdminOverview['dead_letters']> {
    if (!deps.qstash) return null;
    try {
      const { count, more } = await countDeadLetters(deps.qstash, { signal: AbortSignal.timeout(DEAD_LETTERS_TIMEOUT_MS) });
      return { count, more };
    } catch (error) {
      deps.log.warn('dead_letters_unread', { error: error instanceof Error ? error.message : String(error) });
      return null;
    }
  }

  return {
    async overview(caller: Caller): Promise<AdminOverview> {
      requireAdmin(caller);
      const [counts, dead] = await Promise.all([repo.counts(STUCK_AFTER_MINUTES), deadLetters()]);
      const { users, collections, documents, ...jobs } = counts;
      return { users, collections, documents, jobs, dead_letters: dead, stuck_after_minutes: STUCK_AFTER_MINUTES };
    },

    async users(
      caller: Caller,
      query: { since?: string; until?: string; limit: number; offset: number },
    ): Promise<AdminUserView[]> {
      requireAdmin(caller);
      const rows = await repo.users(usageWindow(query), query);
      return rows.map(({ models, ...user }) => {
        // Null without a price table, or when one of the user's models has no price.
        let cost: number | null = deps.prices ? 0 : null;
        for (const m of models) {
          const each = costUsd(deps.prices, m);
          cost = cost === null || each === null ? null : cost + each;
        }
        return { ...user, cost_usd: cost };
      });
    },

    async jobs(caller: Caller, query: { state: JobState; limit: number; offset: number }): Promise<AdminJobView[]> {
      requireAdmin(caller);
      return (await repo.jobs(query.state, STUCK_AFTER_MINUTES, query)).map(view);
    },

    /**
     * A stuck job's first step is queued again, as the cron sweep would do later (every step is idempotent, so it
     * reads what is left); a failed URL job is ingested again as a new job, as its owner. Anything else is 409.
     */
    async retry(caller: Caller, id: string): Promise<{ job_id: string; status: string; retried: 'requeued' | 'reingested' }> {
      requireAdmin(caller);
      const job = isUuid(id) ? await repo.job(id.toLowerCase()) : undefined;
      if (!job) throw notFound('Job');
      const target = { type: 'job' as const, id: job.job_id, collectionId: job.collection_id };
      if (job.status === 'failed') {
        if (!isUrl(job.source)) throw conflict(NOT_RETRYABLE_UPLOAD);
        const owner: Caller = { id: job.user_id, email: null, isAdmin: false, key: null };
        const started = await deps.ingestUrl(owner, job.collection_id ?? undefined, job.source);
        await deps.audit(caller, 'job.retried', target, { retried: 'reingested', new_job_id: started.job_id });
        return { job_id: started.job_id, status: 'queued', retried: 'reingested' };
      }
      if (!deps.queue || !deps.workerUrl) throw unavailable('Ingestion is disabled on this deployment');
      const claimed = await repo.claimStuck(job.job_id, STUCK_AFTER_MINUTES);
      if (!claimed) {
        throw conflict(
          `Only a stuck job (unfinished and untouched for ${STUCK_AFTER_MINUTES} minutes) or a failed URL job can be retried; this one is ${job.status}`,
        );
      }
      await deps.queue.publish([
        stepMessage(deps.workerUrl, { job_id: job.job_id, step: 'extract', from_page: claimed.extract_cursor }, claimed.user_id),
      ]);
      await deps.audit(caller, 'job.retried', target, { retried: 'requeued', status: job.status });
      return { job_id: job.job_id, status: job.status, retried: 'requeued' };
    },
  };
}

export type AdminService = ReturnType<typeof createAdminService>;
