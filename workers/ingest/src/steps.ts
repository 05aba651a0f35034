import { TERMINAL } from '#core/db/ingest-pipeline.ts';
import type { IngestMessage } from '#core/messages/ingest.ts';
import type { Attempt } from '#core/qstash/worker-shell.ts';
import { ParseError } from './parsers/types.ts';
import type { PipelineDeps } from './pipeline/deps.ts';
import { embedBatch } from './pipeline/embed.ts';
import { extract } from './pipeline/extract.ts';
import { failJob, finishIfComplete } from './pipeline/finish.ts';

/**
 * Runs one delivered step. Returning means "done, do not retry"; throwing makes
 * QStash retry. A document that cannot be ingested (ParseError) fails its job at once.
 */
export async function runStep(deps: PipelineDeps, message: IngestMessage, attempt: Attempt): Promise<void> {
  const job = await deps.db.job(message.job_id);
  // Gone (collection or user deleted) or already finished: nothing to do.
  if (!job || TERMINAL.includes(job.status)) return;
  const document = job.document;
  if (!document) return failJob(deps, job.id, null, 'The document was deleted before it was processed');
  const current = { ...job, document };

  if (message.step === 'extract') {
    try {
      await extract(deps, current, message.from_page);
    } catch (error) {
      if (error instanceof ParseError) return failJob(deps, job.id, document, error.message);
      if (attempt.final)
        return failJob(deps, job.id, document, 'The document could not be processed: the worker failed repeatedly');
      throw error;
    }
    return;
  }
  await embedBatch(deps, current, message, attempt);
}

/** QStash's failure callback: every retry of a step failed, so record it rather than wait forever. */
export async function recordFailedStep(deps: PipelineDeps, message: IngestMessage): Promise<void> {
  const job = await deps.db.job(message.job_id);
  if (!job || TERMINAL.includes(job.status)) return;
  if (message.step === 'extract' || !job.document) {
    return failJob(deps, job.id, job.document, 'The document could not be processed: the worker failed repeatedly');
  }
  await deps.db.markFailed(
    job.document.id,
    range(message.from, message.to),
    `chunks ${message.from}–${message.to - 1} could not be indexed`,
  );
  await finishIfComplete(deps, { ...job, document: job.document });
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
