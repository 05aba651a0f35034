import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRef, useState } from 'preact/hooks';
import { messageOf } from '../api.ts';
import { Failure } from '../Failure.tsx';
import { When } from '../when.tsx';
import { type AdminJob, adminKey, type JobState, listJobs, PAGE, retryJob } from './api.ts';
import { Pager } from './Pager.tsx';

const TABS = [
  ['stuck', 'Stuck'],
  ['failed', 'Failed'],
] as const satisfies readonly (readonly [JobState, string])[];

const STATUS: Record<AdminJob['status'], string> = {
  queued: 'Queued',
  processing: 'Processing',
  succeeded: 'Succeeded',
  partial: 'Partly read',
  failed: 'Failed',
};

function JobCard({ job, busy, onRetry }: { job: AdminJob; busy: boolean; onRetry: () => void }) {
  return (
    <li class="card job" data-job={job.job_id} data-status={job.status}>
      <div class="grow stack-tight">
        <strong class="url">{job.source}</strong>
        <dl class="facts">
          <div>
            <dt>Owner</dt>
            <dd>{job.user_email ?? job.user_id}</dd>
          </div>
          <div>
            <dt>In</dt>
            <dd>{job.collection_id === null ? 'Personal space' : (job.collection_name ?? 'A deleted collection')}</dd>
          </div>
          <div>
            <dt>Status</dt>
            <dd>{STATUS[job.status]}</dd>
          </div>
          <div>
            <dt>Chunks</dt>
            <dd>
              {job.chunks_processed} of {job.chunks_total}
            </dd>
          </div>
          <div>
            <dt>Started</dt>
            <dd>
              <When iso={job.created_at} />
            </dd>
          </div>
          <div>
            <dt>Last touched</dt>
            <dd>
              <When iso={job.updated_at} />
            </dd>
          </div>
        </dl>
        {job.error_message && <p class="job-error">{job.error_message}</p>}
        {job.retry_note && <p class="hint">{job.retry_note}</p>}
      </div>
      {job.retryable && (
        <button type="button" onClick={onRetry} disabled={busy} aria-label={`Retry ${job.source}`}>
          {busy ? 'Retrying…' : 'Retry'}
        </button>
      )}
    </li>
  );
}

/**
 * Stuck and failed ingestion jobs of every user, as two tabs, each a page at a time; a retryable one is retried with a
 * button, and the outcome (queued again, or ingested again as a new job) is said and the lists asked for again.
 */
export function JobsSection() {
  const queries = useQueryClient();
  const [state, setState] = useState<JobState>('stuck');
  const [offset, setOffset] = useState(0);
  const [retrying, setRetrying] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  const [problem, setProblem] = useState('');
  const noticeLine = useRef<HTMLParagraphElement>(null);
  const tabs = useRef<(HTMLButtonElement | null)[]>([]);
  const jobs = useQuery({
    queryKey: [...adminKey, 'jobs', state, offset],
    queryFn: () => listJobs(state, offset),
    placeholderData: keepPreviousData,
  });

  const choose = (next: JobState) => {
    setState(next);
    setOffset(0);
  };
  // The tabs' keys, as WAI-ARIA's tab pattern has them: the arrows, Home and End move between them.
  const onTabKey = (event: KeyboardEvent, index: number) => {
    const moves: Record<string, number> = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: TABS.length - 1 };
    const to = moves[event.key];
    if (to === undefined) return;
    event.preventDefault();
    const next = (to + TABS.length) % TABS.length;
    choose(TABS[next]?.[0] ?? 'stuck');
    tabs.current[next]?.focus();
  };

  async function retry(job: AdminJob) {
    setRetrying(job.job_id);
    setNotice(`Retrying ${job.source}…`);
    setProblem('');
    try {
      const retried = await retryJob(job.job_id);
      setNotice(
        retried.retried === 'requeued'
          ? `Queued again: ${job.source} goes on from where it stopped (job ${retried.job_id}).`
          : `Ingested again: ${job.source} is a new job of its owner (job ${retried.job_id}), queued.`,
      );
    } catch (error) {
      setNotice('');
      setProblem(`${job.source} was not retried: ${messageOf(error)}`);
    }
    setRetrying(null);
    await queries.invalidateQueries({ queryKey: adminKey });
    // The job's card may have left the list with the retry: the outcome takes the focus.
    noticeLine.current?.focus();
  }

  const rows = jobs.data ?? [];
  return (
    <section class="stack" aria-labelledby="admin-jobs">
      <h2 id="admin-jobs">Ingestion jobs</h2>
      <div role="tablist" aria-label="Jobs" class="tabs">
        {TABS.map(([value, label], index) => (
          <button
            key={value}
            ref={(element) => {
              tabs.current[index] = element;
            }}
            type="button"
            role="tab"
            id={`jobs-tab-${value}`}
            aria-selected={state === value}
            aria-controls="jobs-panel"
            tabIndex={state === value ? 0 : -1}
            onClick={() => choose(value)}
            onKeyDown={(event) => onTabKey(event, index)}
          >
            {label}
          </button>
        ))}
      </div>
      <p role="status" ref={noticeLine} tabIndex={-1} class="notice">
        {notice}
      </p>
      {problem && (
        <p role="alert" class="error">
          {problem}
        </p>
      )}
      <div role="tabpanel" id="jobs-panel" aria-labelledby={`jobs-tab-${state}`} class="stack">
        <p class="hint">
          {state === 'stuck'
            ? 'Unfinished jobs nothing has touched for a while, oldest first: the cron sweep queues them again by itself later, or retry one now.'
            : 'Jobs that failed, newest first, with why. A page from the web can be ingested again; an upload must be uploaded again by its owner.'}
        </p>
        {jobs.isPending && <p>Loading…</p>}
        <Failure error={jobs.error} />
        {jobs.data && rows.length === 0 && <p>{state === 'stuck' ? 'No stuck jobs.' : 'No failed jobs.'}</p>}
        {rows.length > 0 && (
          <ul class="cards" aria-label={state === 'stuck' ? 'Stuck jobs' : 'Failed jobs'}>
            {rows.map((job) => (
              <JobCard key={job.job_id} job={job} busy={retrying === job.job_id} onRetry={() => retry(job)} />
            ))}
          </ul>
        )}
        <Pager offset={offset} shown={rows.length} limit={PAGE} what={`${state} jobs`} onOffset={setOffset} />
      </div>
    </section>
  );
}
