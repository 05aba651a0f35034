import { useQuery } from '@tanstack/preact-query';
import { Failure } from '../Failure.tsx';
import { When } from '../when.tsx';
import { listPages, pagesKey, type SourcePage } from './api.ts';

const PAGE_STATUS = {
  ok: 'Kept',
  pending: 'Not reached yet by this sync',
  failed: 'Failed',
  gone: 'Gone (removed if still gone at the next sync)',
  skipped: 'Skipped: robots.txt disallows it',
} satisfies Record<SourcePage['status'], string>;

/** The pages a source keeps, as its latest sync found them; loaded when its disclosure opens. */
export function SourcePages({ sourceId, running }: { sourceId: string; running: boolean }) {
  const listed = useQuery({
    queryKey: pagesKey(sourceId),
    queryFn: () => listPages(sourceId),
    refetchInterval: running ? 2_000 : false,
  });
  if (listed.isPending) return <p>Loading…</p>;
  if (listed.error) return <Failure error={listed.error} />;
  if (listed.data.length === 0) return <p>No pages yet.</p>;
  return (
    <ul class="plain source-pages" aria-label="Pages">
      {listed.data.map((page) => (
        <li key={page.url} data-status={page.status}>
          <a href={page.url} target="_blank" rel="noopener noreferrer" class="url">
            {page.title ?? page.url}
          </a>
          <dl class="facts">
            <div>
              <dt>State</dt>
              <dd class={page.status === 'failed' ? 'error' : undefined}>{PAGE_STATUS[page.status]}</dd>
            </div>
            {page.error && (
              <div>
                <dt>Why</dt>
                <dd>{page.error}</dd>
              </div>
            )}
            {page.last_fetched_at && (
              <div>
                <dt>Fetched</dt>
                <dd>
                  <When iso={page.last_fetched_at} />
                </dd>
              </div>
            )}
            {page.last_changed_at && (
              <div>
                <dt>Changed</dt>
                <dd>
                  <When iso={page.last_changed_at} />
                </dd>
              </div>
            )}
          </dl>
        </li>
      ))}
    </ul>
  );
}
