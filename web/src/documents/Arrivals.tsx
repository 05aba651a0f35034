import type { Job } from './api.ts';
import { indexingText, sentText } from './format.ts';

/** One file or URL on its way in: its bytes, then its job, then how it ended. */
export interface Arrival {
  key: number;
  name: string;
  size: number | null;
  sent: number;
  jobId: string | null;
  /** The place already held these bytes: nothing new was added. */
  duplicate?: boolean;
  refused: string | null;
}

function ArrivalItem({ arrival, job }: { arrival: Arrival; job: Job | undefined }) {
  let text: string;
  let bar: { value?: number; max?: number } | null = null;
  if (arrival.refused) text = arrival.refused;
  else if (!arrival.jobId) {
    text = arrival.size === null ? 'Sending…' : `Uploading: ${sentText(arrival.sent, arrival.size)}`;
    bar = arrival.size === null ? {} : { value: arrival.sent, max: arrival.size };
  } else if (!job || job.status === 'queued') {
    text = 'Waiting to be read';
    bar = {};
  } else if (job.status === 'processing') {
    text = job.chunks_total ? indexingText(job) : 'Reading';
    bar = job.chunks_total ? { value: job.chunks_processed, max: job.chunks_total } : {};
  } else if (arrival.duplicate && job.status !== 'failed')
    text = `Already here: the same file is in this list (${job.chunks_total} chunks)`;
  else if (job.status === 'succeeded') text = `Added: ${job.chunks_total} chunks`;
  else if (job.status === 'partial') text = `Added in part: ${job.error_message ?? 'some of it could not be read.'}`;
  else text = `Not added: ${job.error_message ?? 'it could not be read.'}`;
  const failed = Boolean(arrival.refused) || job?.status === 'failed';
  return (
    <li class="card" data-status={arrival.refused ? 'refused' : arrival.jobId ? (job?.status ?? 'queued') : 'uploading'}>
      <span class="grow">
        <strong class="long">{arrival.name}</strong>
        <br />
        <span class={failed ? 'error' : undefined} role={failed ? 'alert' : 'status'}>
          {text}
        </span>
      </span>
      {bar && <progress value={bar.value} max={bar.max} aria-label={`${arrival.name} progress`} />}
    </li>
  );
}

/** The files and pages added since the page opened, newest first, each with its own job's progress. */
export function Arrivals({ arrivals, jobs }: { arrivals: Arrival[]; jobs: Job[] }) {
  if (arrivals.length === 0) return null;
  return (
    <ul class="cards" aria-label="Arriving">
      {arrivals.map((arrival) => (
        <ArrivalItem key={arrival.key} arrival={arrival} job={jobs.find((job) => job.job_id === arrival.jobId)} />
      ))}
    </ul>
  );
}
