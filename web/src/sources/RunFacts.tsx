import { When } from '../when.tsx';
import type { RunCounts, SourceRun } from './api.ts';
import { COUNTS, durationText, STATUS } from './format.ts';

/** A run's nine counts, each after its name (its meaning on hover). */
export function Counts({ counts, label }: { counts: RunCounts; label: string }) {
  return (
    <dl class="facts counts" aria-label={label}>
      {COUNTS.map(([key, name, meaning]) => (
        <div key={key} data-count={key} title={meaning}>
          <dt>{name}</dt>
          <dd>{counts[key]}</dd>
        </div>
      ))}
    </dl>
  );
}

/** How a run stands: its status in words (a bar while it runs), and when. */
export function RunStatus({ run, subject }: { run: SourceRun; subject: string }) {
  const { found, fetched } = run.counts;
  return (
    <span class="run-status" data-status={run.status}>
      <strong class={run.status === 'failed' ? 'error' : run.status === 'succeeded' ? 'ok' : undefined}>
        {STATUS[run.status]}
      </strong>
      {run.status === 'running' ? (
        <>
          <span>
            {fetched} of {found} pages fetched
          </span>
          <progress
            aria-label={`Syncing ${subject}`}
            value={found > 0 ? fetched : undefined}
            max={found > 0 ? found : undefined}
          />
        </>
      ) : (
        <span class="hint">
          {run.finished_at && <When iso={run.finished_at} />} (took {durationText(run)})
        </span>
      )}
    </span>
  );
}
