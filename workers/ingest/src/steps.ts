import { TERMINAL } from '#core/db/ingest-pipeline.ts';
import type { IngestMessage } from '#core/messages/ingest.ts';
import { type Attempt, type Ending, RetryLater } from '#core/qstash/worker-shell.ts';
import type { PipelineDeps } from './pipeline/deps.ts';
import { embedBatch } from './pipeline/embed.ts';
import { extract } from './pipeline/extract.ts';
import { failJob, finishIfComplete, settleEnded, takeBackIfGone } from './pipeline/finish.ts';
import { JOB_MESSAGES, messageIfLast, sortFailure } from './pipeline/job-messages.ts';

/**
 * Runs one delivered step. Returning means "done, do not retry"; throwing makes
 * QStash retry. A document that cannot be ingested (ParseError) or a URL that is refused
 * fails its job at once; a DNS outage is retried like any other passing failure.
 */
export async function runStep(delivery: PipelineDeps, message: IngestMessage, attempt: Attempt): Promise<void> {
  const job = await delivery.db.job(message.job_id);
  // Gone (collection or user deleted): nothing to do. Ended: only what follows an ending, if it did not happen.
  if (!job) return;
  // Every line the step logs names whose document it is, and where.
  const deps = {
    ...delivery,
    log: delivery.log.with({ user_id: job.user_id, collection_id: job.document?.collection_id ?? null }),
  };
  if (TERMINAL.includes(job.status)) return settleEnded(deps, job);
  const document = job.document;
  if (!document) return failJob(deps, job.id, null, JOB_MESSAGES.deleted);
  const current = { ...job, document };

  if (message.step === 'extract') {
    try {
      await extract(deps, current, message.from_page);
    } catch (error) {
      // Deleted or cancelled while it ran (its rows could not be saved): take back the figures it stored.
      if (await takeBackIfGone(deps, document)) return;
      const failure = sortFailure(error, attempt);
      // Retried; should QStash give up, its failure callback ends the job with the message this names.
      if (failure.retry) throw new RetryLater(messageIfLast(error), { cause: error });
      deps.log.error('extract_failed', error, { job_id: job.id, final: true });
      return failJob(deps, job.id, document, failure.message);
    }
    await takeBackIfGone(deps, document);
    return;
  }
  await embedBatch(deps, current, message, attempt);
}

/**
 * QStash's failure callback: every attempt of a step failed, so end it rather than wait forever. An
 * extract step ends its job with what its last attempt said a failure of that kind means (a DNS
 * outage that outlasted the retries says so), never running again what may have crashed the
 * isolate. An embed step gets its final run here: what can be indexed is, and an image still
 * undescribed is recorded as lost without asking the vision model again (every attempt did); if
 * even that fails, the whole batch is.
 */
export async function recordFailedStep(deps: PipelineDeps, message: IngestMessage, ending: Ending): Promise<void> {
  const job = await deps.db.job(message.job_id);
  if (!job) return;
  if (TERMINAL.includes(job.status)) return settleEnded(deps, job);
  if (message.step === 'extract' || !job.document) {
    return failJob(deps, job.id, job.document, ending.lastFailure ?? JOB_MESSAGES.workerFailed);
  }
  const final: Attempt = { retried: Math.max(0, (ending.attempts ?? 1) - 1), final: true };
  const models = { ...deps.models, describeImage: () => Promise.reject(new Error('not described by any attempt')) };
  try {
    return await embedBatch({ ...deps, models }, { ...job, document: job.document }, message, final);
  } catch (error) {
    deps.log.error('embed_failed', error, { job_id: job.id, from: message.from, to: message.to, final: true });
  }
  await deps.db.markFailed(
    job.document.id,
    range(message.from, message.to),
    `chunks ${message.from}–${message.to - 1} could not be indexed`,
  );
  await finishIfComplete(deps, { ...job, document: job.document });
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
