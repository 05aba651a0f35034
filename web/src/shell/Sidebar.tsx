import { useState } from 'preact/hooks';
import { canWrite, chatTitle, type Listed, useCollections, useSessions } from '../collections.ts';
import { Failure } from '../Failure.tsx';
import { useSession } from '../session.ts';

/** Where the address says the reader is: which collection (or the personal space), which chat, which page. */
export interface Place {
  collectionId: string | null;
  personal: boolean;
  sessionId: string | null;
  path: string;
}

export function placeOf(path: string): Place {
  const match = /^\/app\/c\/([^/]+)(?:\/chat\/([^/]+))?/.exec(path);
  return {
    collectionId: match?.[1] ? decodeURIComponent(match[1]) : null,
    personal: path.startsWith('/app/personal'),
    sessionId: match?.[2] ? decodeURIComponent(match[2]) : null,
    path,
  };
}

const current = (here: boolean) => (here ? 'page' : undefined);

function CollectionPages({ collection, place }: { collection: Listed; place: Place }) {
  const base = `/app/c/${collection.id}`;
  const sessions = useSessions(collection.id);
  const pages: [string, string][] = [
    ['documents', 'Documents'],
    ...(canWrite(collection) ? ([['sources', 'Sources']] as [string, string][]) : []),
    ...(collection.shared ? [] : ([['sharing', 'Sharing']] as [string, string][])),
    ['quality', 'Quality'],
    ['settings', 'Settings'],
  ];
  return (
    <div class="side-group">
      <ul class="plain side-pages" aria-label={`${collection.name} pages`}>
        {pages.map(([slug, label]) => (
          <li key={slug}>
            <a href={`${base}/${slug}`} aria-current={current(place.path === `${base}/${slug}`)}>
              {label}
            </a>
          </li>
        ))}
      </ul>
      <ul class="plain side-chats" aria-label={`Chats in ${collection.name}`}>
        {sessions.data?.map((session) => (
          <li key={session.id}>
            <a href={`${base}/chat/${session.id}`} aria-current={current(place.sessionId === session.id)}>
              {chatTitle(session)}
            </a>
          </li>
        ))}
        {sessions.data?.length === 0 && <li class="hint">No chats yet.</li>}
      </ul>
      <Failure error={sessions.error} />
    </div>
  );
}

function CollectionEntry({ collection, place }: { collection: Listed; place: Place }) {
  const here = place.collectionId === collection.id;
  const [open, setOpen] = useState(here);
  const expanded = open || here;
  return (
    <li>
      <div class="side-row">
        <a
          href={`/app/c/${collection.id}`}
          class="side-name"
          aria-current={current(here && !place.sessionId && place.path === `/app/c/${collection.id}`)}
        >
          {collection.name}
          {collection.shared && <span class="badge">shared</span>}
        </a>
        <button
          type="button"
          class="icon"
          aria-expanded={expanded}
          aria-label={`${expanded ? 'Hide' : 'Show'} the chats and pages of ${collection.name}`}
          onClick={() => setOpen(!expanded)}
          disabled={here}
        >
          {expanded ? '▾' : '▸'}
        </button>
      </div>
      {expanded && <CollectionPages collection={collection} place={place} />}
    </li>
  );
}

/** The collections and the personal space, each with its chats and pages; the main pane shows the one chosen. */
export function Sidebar({ place }: { place: Place }) {
  const collections = useCollections();
  const isAdmin = useSession()?.user.app_metadata?.is_admin === true;
  const newChat = place.collectionId ? `/app/c/${place.collectionId}` : place.personal ? '/app/personal' : '/app/';
  return (
    <div class="stack side">
      <a class="button" href={newChat}>
        New chat
      </a>
      <section aria-labelledby="side-personal">
        <h2 id="side-personal" class="side-title">
          Personal space
        </h2>
        <ul class="plain side-pages">
          <li>
            <a href="/app/personal" aria-current={current(place.path === '/app/personal')}>
              Ask
            </a>
          </li>
          <li>
            <a href="/app/personal/documents" aria-current={current(place.path === '/app/personal/documents')}>
              Documents
            </a>
          </li>
          <li>
            <a href="/app/personal/sources" aria-current={current(place.path === '/app/personal/sources')}>
              Sources
            </a>
          </li>
        </ul>
      </section>
      <section aria-labelledby="side-collections">
        <h2 id="side-collections" class="side-title">
          Collections
        </h2>
        {collections.isPending && <p class="hint">Loading…</p>}
        <Failure error={collections.error} />
        <ul class="plain side-collections">
          {collections.data?.map((collection) => (
            <CollectionEntry key={collection.id} collection={collection} place={place} />
          ))}
        </ul>
        <a href="/app/collections" aria-current={current(place.path === '/app/collections')}>
          Manage collections
        </a>
      </section>
      <a href="/app/settings" aria-current={current(place.path === '/app/settings')}>
        API keys &amp; webhooks
      </a>
      <a href="/app/usage" aria-current={current(place.path === '/app/usage')}>
        Usage
      </a>
      {isAdmin && (
        <a href="/app/admin" aria-current={current(place.path === '/app/admin')}>
          Administration
        </a>
      )}
    </div>
  );
}
