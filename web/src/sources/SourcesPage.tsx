import { useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRef, useState } from 'preact/hooks';
import { messageOf } from '../api.ts';
import { documentsKey } from '../documents/api.ts';
import { plural } from '../documents/format.ts';
import { Failure } from '../Failure.tsx';
import { AddSource } from './AddSource.tsx';
import { deleteSource, isRunning, listSources, type Source, sourcesKey } from './api.ts';
import { DeleteSourceDialog } from './DeleteSourceDialog.tsx';
import { RunHistory } from './RunHistory.tsx';
import { SourceCard } from './SourceCard.tsx';
import './sources.css';

/**
 * The web sites and pages a collection (or, null, the personal space) keeps in sync: each with how its last sync
 * went, counted live every 2 s while one runs; added, synced, paused, rescheduled, deleted, its runs opened.
 * Loaded as a chunk of its own when first opened (App.tsx), not with the first page.
 */
export function Sources({ collectionId }: { collectionId: string | null }) {
  const queries = useQueryClient();
  const listed = useQuery({
    queryKey: sourcesKey(collectionId),
    queryFn: () => listSources(collectionId),
    refetchInterval: (query) => (query.state.data?.some((source) => isRunning(source.last_run)) ? 2_000 : false),
  });
  // A sync adds, changes and removes documents: the documents page asks again when next shown.
  const refresh = () =>
    Promise.all([
      queries.invalidateQueries({ queryKey: sourcesKey(collectionId) }),
      queries.invalidateQueries({ queryKey: ['source-runs'] }),
      queries.invalidateQueries({ queryKey: documentsKey(collectionId) }),
    ]);
  const [history, setHistory] = useState<Source | null>(null);
  const [doomed, setDoomed] = useState<Source | null>(null);
  const [notice, setNotice] = useState('');
  const [problem, setProblem] = useState('');
  const noticeLine = useRef<HTMLParagraphElement>(null);

  const say = (text: string, failure = '') => {
    setNotice(text);
    setProblem(failure);
  };

  async function remove(source: Source) {
    say(`Deleting ${source.url}…`);
    try {
      const { documents_removed } = await deleteSource(source.id);
      say(`Deleted ${source.url} and ${plural(documents_removed, 'document')}.`);
    } catch (error) {
      say('', `${source.url} was not deleted: ${messageOf(error)}`);
    }
    await refresh();
    // The button that opened the dialog went with its card: the outcome takes the focus.
    noticeLine.current?.focus();
  }

  const sources = listed.data ?? [];
  return (
    <section class="stack page sources" aria-labelledby="sources-title">
      <h1 id="sources-title">Sources</h1>
      <p>
        Web sites and pages kept in sync: each page becomes a document here, a new version when it changes, and goes when it is
        gone.
      </p>
      <AddSource
        collectionId={collectionId}
        onAdded={(source) => {
          say(`Added ${source.url}: its first sync is running.`);
          return refresh();
        }}
      />
      <p role="status" ref={noticeLine} tabIndex={-1} class="notice">
        {notice}
      </p>
      {problem && (
        <p role="alert" class="error">
          {problem}
        </p>
      )}
      <h2>{collectionId ? 'This collection’s sources' : 'Your sources'}</h2>
      {listed.isPending && <p>Loading…</p>}
      <Failure error={listed.error} />
      {listed.data && sources.length === 0 && <p>No sources yet.</p>}
      <ul class="cards" aria-label="Sources">
        {sources.map((source) => (
          <SourceCard
            key={source.id}
            source={source}
            onChanged={refresh}
            onHistory={() => setHistory(source)}
            onDelete={() => setDoomed(source)}
          />
        ))}
      </ul>
      <RunHistory source={history} onClose={() => setHistory(null)} />
      <DeleteSourceDialog doomed={doomed} onConfirm={remove} onClose={() => setDoomed(null)} />
    </section>
  );
}

export default Sources;
