import { useQuery } from '@tanstack/preact-query';
import { Failure } from '../Failure.tsx';
import { count } from '../usage/format.ts';
import { adminKey, type Overview, readOverview } from './api.ts';

const deadLetterText = (dead: Overview['dead_letters']) =>
  dead === null ? 'Unknown' : `${count(dead.count)}${dead.more ? '+' : ''}`;

/** The deployment at a glance: accounts, collections, documents, the ingestion jobs' states and the dead letters. */
export function OverviewSection() {
  const overview = useQuery({ queryKey: [...adminKey, 'overview'], queryFn: readOverview, refetchInterval: 30_000 });
  const o = overview.data;
  const figure = (name: string, label: string, value: string, alarm = false) => (
    <div data-figure={name} class={alarm ? 'alarm' : undefined}>
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
  );
  return (
    <section class="stack" aria-labelledby="admin-overview">
      <h2 id="admin-overview">Overview</h2>
      {overview.isPending && <p>Loading…</p>}
      <Failure error={overview.error} />
      {o && (
        <>
          <dl class="figures" aria-label="The deployment’s counts">
            {figure('users', 'Users', count(o.users))}
            {figure('collections', 'Collections', count(o.collections))}
            {figure('documents', 'Documents', count(o.documents))}
            {figure('queued', 'Jobs queued', count(o.jobs.queued))}
            {figure('processing', 'Jobs processing', count(o.jobs.processing))}
            {figure('stuck', 'Jobs stuck', count(o.jobs.stuck), o.jobs.stuck > 0)}
            {figure('failed', 'Failed, last 24 h', count(o.jobs.failed_last_24h), o.jobs.failed_last_24h > 0)}
            {figure('dead_letters', 'Dead letters', deadLetterText(o.dead_letters), (o.dead_letters?.count ?? 0) > 0)}
          </dl>
          <p class="hint">
            A job is stuck when it is unfinished and nothing has touched it for {o.stuck_after_minutes} minutes: its messages were
            lost. Dead letters are QStash messages that failed every retry.
            {o.dead_letters === null && (
              <strong> QStash could not be read just now, so their number is unknown: GET /ready says why.</strong>
            )}
            {o.dead_letters?.more && ' There are more than it counts.'}
          </p>
        </>
      )}
    </section>
  );
}
