import type { Doc, Job } from './api.ts';
import { isRunning } from './jobs.ts';

export type Status = 'indexed' | 'partial' | 'running' | 'failed' | 'empty';

export interface DocumentState {
  status: Status;
  job?: Job;
  newVersion?: Job;
}

/**
 * A document's state from the caller's newest job on it, or on a new version of it; with no job of theirs
 * (another member's upload, or one older than the jobs listed) the chunk count is all there is to go on.
 */
export function stateOf(doc: Doc, jobs: Job[]): DocumentState {
  const job = jobs.find((candidate) => candidate.document_id === doc.id);
  const newVersion = jobs.find((candidate) => candidate.replaces_document_id === doc.id);
  if (!job) return { status: doc.chunk_count > 0 ? 'indexed' : 'empty', newVersion };
  if (isRunning(job)) return { status: 'running', job, newVersion };
  const ended = { succeeded: 'indexed', partial: 'partial', failed: 'failed' } as const;
  return { status: ended[job.status as keyof typeof ended], job, newVersion };
}
