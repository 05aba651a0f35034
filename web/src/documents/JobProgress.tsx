import type { Job } from './api.ts';
import { indexingText } from './format.ts';

/** A job at work, as words and a bar; `subject` names what is being indexed, for the bar and the cancel button. */
export function JobProgress({ job, subject, onCancel }: { job: Job; subject: string; onCancel?: () => void }) {
  const counted = job.status === 'processing' && job.chunks_total > 0;
  return (
    <span class="job">
      <span>{counted ? indexingText(job) : 'Waiting to be read'}</span>
      <progress
        aria-label={`Indexing ${subject}`}
        value={counted ? job.chunks_processed : undefined}
        max={counted ? job.chunks_total : undefined}
      />
      {onCancel && (
        <button type="button" class="link" onClick={onCancel} aria-label={`Cancel indexing ${subject}`}>
          Cancel
        </button>
      )}
    </span>
  );
}
