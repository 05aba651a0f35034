import { useMutation } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { Failure } from '../Failure.tsx';
import { When } from '../when.tsx';
import { isRunning, type Schedule, type Source, syncSource, updateSource } from './api.ts';
import { kindText, pagesText, SCHEDULES } from './format.ts';
import { Counts, RunStatus } from './RunFacts.tsx';
import { SourcePages } from './SourcePages.tsx';

/**
 * One source: how its last sync went (live while it runs), what it keeps, when it syncs by itself; synced, paused
 * or resumed, rescheduled here; its runs and its deletion are the page's dialogs.
 */
export function SourceCard({
  source,
  onChanged,
  onHistory,
  onDelete,
}: {
  source: Source;
  onChanged: () => Promise<unknown>;
  onHistory: () => void;
  onDelete: () => void;
}) {
  const [pagesOpen, setPagesOpen] = useState(false);
  const run = source.last_run;
  const running = isRunning(run);
  const sync = useMutation({ mutationFn: () => syncSource(source.id), onSettled: onChanged });
  const change = useMutation({
    mutationFn: (body: { paused: boolean } | { schedule: Schedule }) => updateSource(source.id, body),
    onSuccess: onChanged,
  });
  const pause = source.paused ? 'Resume' : 'Pause';
  return (
    <li class="card source" data-paused={source.paused} data-status={run?.status ?? 'none'}>
      <div class="stack-tight">
        <span class="row tight">
          <a href={source.url} target="_blank" rel="noopener noreferrer" class="url source-url">
            {source.url}
          </a>
          <span class="badge">{kindText(source.kind)}</span>
          {source.paused && <span class="badge paused">paused</span>}
        </span>
        <dl class="facts">
          <div>
            <dt>Last sync</dt>
            <dd>{run ? <RunStatus run={run} subject={source.url} /> : 'none yet'}</dd>
          </div>
          <div>
            <dt>Pages</dt>
            <dd>{source.pages}</dd>
          </div>
          {source.next_sync_at && (
            <div>
              <dt>Next sync</dt>
              <dd>{Date.parse(source.next_sync_at) <= Date.now() ? 'due now' : <When iso={source.next_sync_at} />}</dd>
            </div>
          )}
          {source.kind === 'site' && (
            <div>
              <dt>Limits</dt>
              <dd>
                {pagesText(source.max_pages)}, {source.max_depth} links deep
              </dd>
            </div>
          )}
        </dl>
        {run && <Counts counts={run.counts} label={`Pages in the last sync of ${source.url}`} />}
        {run?.message && <p class={run.status === 'failed' ? 'error' : 'hint'}>{run.message}</p>}
      </div>
      <div class="source-controls row">
        <label class="schedule">
          <span>Schedule</span>
          <select
            value={source.schedule ?? ''}
            disabled={change.isPending}
            aria-label={`Schedule of ${source.url}`}
            onChange={(event) => change.mutate({ schedule: (event.currentTarget.value || null) as Schedule })}
          >
            {SCHEDULES.map(([value, words]) => (
              <option key={value} value={value}>
                {words}
              </option>
            ))}
          </select>
        </label>
        <span class="row tight">
          <button
            type="button"
            aria-label={`Sync now: ${source.url}`}
            disabled={running || sync.isPending}
            onClick={() => sync.mutate()}
          >
            Sync now
          </button>
          <button
            type="button"
            class="secondary"
            aria-label={`${pause} ${source.url}`}
            disabled={change.isPending}
            onClick={() => change.mutate({ paused: !source.paused })}
          >
            {pause}
          </button>
          <button type="button" class="secondary" aria-label={`Run history of ${source.url}`} onClick={onHistory}>
            Run history
          </button>
          <button type="button" class="danger" aria-label={`Delete source ${source.url}`} onClick={onDelete}>
            Delete
          </button>
        </span>
      </div>
      <Failure error={sync.error ?? change.error} />
      <details class="wide" onToggle={(event) => setPagesOpen(event.currentTarget.open)}>
        <summary>Pages it keeps</summary>
        {pagesOpen && <SourcePages sourceId={source.id} running={running} />}
      </details>
    </li>
  );
}
