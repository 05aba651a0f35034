import type { Doc, Job } from './api.ts';
import { sentText } from './format.ts';
import { JobProgress } from './JobProgress.tsx';
import { isRunning } from './jobs.ts';
import type { Replacing } from './replacing.ts';
import type { DocumentState } from './status.ts';

/** How a document's indexing went, or is going, and that of a new version of it uploaded from its row. */
export function StatusCell({
  doc,
  state: { status, job, newVersion },
  replacing,
  onCancel,
}: {
  doc: Doc;
  state: DocumentState;
  replacing?: Replacing;
  onCancel?: (job: Job) => void;
}) {
  return (
    <td data-label="Status" class="status" data-status={status}>
      {status === 'running' && job && <JobProgress job={job} subject={doc.name} onCancel={onCancel && (() => onCancel(job))} />}
      {status === 'indexed' && <span class="ok">Indexed</span>}
      {status === 'empty' && <span>No passages yet</span>}
      {status === 'partial' && <span class="error">Indexed in part: {job?.error_message}</span>}
      {status === 'failed' && <span class="error">Failed: {job?.error_message ?? 'it could not be read.'}</span>}
      {replacing && 'refused' in replacing && (
        <span role="alert" class="error">
          {replacing.refused}
        </span>
      )}
      {replacing && 'sent' in replacing && (
        <span class="job">
          <span>New version: {sentText(replacing.sent, replacing.size)}</span>
          <progress value={replacing.sent} max={replacing.size} aria-label={`Uploading a new version of ${doc.name}`} />
        </span>
      )}
      {!replacing && newVersion && isRunning(newVersion) && (
        <span class="new-version">
          New version ({newVersion.source}):{' '}
          <JobProgress
            job={newVersion}
            subject={`the new version of ${doc.name}`}
            onCancel={onCancel && (() => onCancel(newVersion))}
          />
        </span>
      )}
      {!replacing && newVersion?.status === 'failed' && (
        <span class="error">
          New version ({newVersion.source}) not added: {newVersion.error_message ?? 'it could not be read.'}
        </span>
      )}
    </td>
  );
}
