import { useQuery } from '@tanstack/preact-query';
import { Failure } from '../Failure.tsx';
import { useModal } from '../modal.ts';
import { When } from '../when.tsx';
import { isRunning, listRuns, runsKey, type Source, type SourceRun } from './api.ts';
import { TRIGGER } from './format.ts';
import { Counts, RunStatus } from './RunFacts.tsx';

function Run({ run, subject }: { run: SourceRun; subject: string }) {
  return (
    <li class="run" data-status={run.status}>
      <div class="row tight">
        <RunStatus run={run} subject={subject} />
        <span class="badge">{TRIGGER[run.trigger]}</span>
      </div>
      <dl class="facts">
        <div>
          <dt>Started</dt>
          <dd>
            <When iso={run.started_at} />
          </dd>
        </div>
        {run.finished_at && (
          <div>
            <dt>Ended</dt>
            <dd>
              <When iso={run.finished_at} />
            </dd>
          </div>
        )}
      </dl>
      <Counts counts={run.counts} label="Pages" />
      {run.message && <p class={run.status === 'failed' ? 'error' : undefined}>{run.message}</p>}
      {run.errors.length > 0 && (
        <details>
          <summary>{run.errors.length === 1 ? '1 page' : `${run.errors.length} pages`} failed or removed</summary>
          <ul class="run-errors">
            {run.errors.map((error, i) => (
              // The same URL may fail twice in one run (a redirect's target); its place keeps the key unique.
              <li key={`${i} ${error.url}`}>
                <span class="url">{error.url}</span>: {error.message}
              </li>
            ))}
          </ul>
        </details>
      )}
    </li>
  );
}

/** A source's runs, newest first, in a modal; kept fresh every 2 s while one of them runs. */
export function RunHistory({ source, onClose }: { source: Source | null; onClose: () => void }) {
  const dialog = useModal(source !== null);
  const runs = useQuery({
    queryKey: runsKey(source?.id ?? ''),
    queryFn: () => listRuns(source?.id ?? ''),
    enabled: source !== null,
    refetchInterval: (query) => (query.state.data?.some(isRunning) ? 2_000 : false),
  });
  return (
    <dialog ref={dialog} aria-labelledby="runs-title" class="runs-dialog" onClose={onClose}>
      <div class="stack">
        <h2 id="runs-title">
          Run history of <span class="url">{source?.url}</span>
        </h2>
        {runs.isPending && <p>Loading…</p>}
        <Failure error={runs.error} />
        {runs.data?.length === 0 && <p>No runs yet.</p>}
        {source && runs.data && runs.data.length > 0 && (
          <ol class="plain runs" aria-label="Runs, newest first">
            {runs.data.map((run) => (
              <Run key={run.id} run={run} subject={source.url} />
            ))}
          </ol>
        )}
        <form method="dialog" class="row">
          <button type="submit">Close</button>
        </form>
      </div>
    </dialog>
  );
}
