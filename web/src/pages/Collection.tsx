import { useQuery } from '@tanstack/preact-query';
import { api } from '../api.ts';
import { Ask } from './Ask.tsx';
import { Documents } from './Documents.tsx';
import { Quality } from './Quality.tsx';
import { Sharing } from './Share.tsx';

interface Listed {
  id: string;
  name: string;
  shared?: true;
  permission?: 'query' | 'ingest';
}

/** One collection's page (its name from the list the caller can see), or the personal space. */
export function Collection({ params }: { params: { id?: string } }) {
  const id = params.id ?? null;
  const listed = useQuery({ queryKey: ['collections'], queryFn: () => api<Listed[]>('GET', '/collections/') });
  const collection = id ? listed.data?.find((c) => c.id === id) : undefined;
  const title = id ? (collection?.name ?? (listed.isPending ? '…' : 'Collection')) : 'Personal space';
  return (
    <main class="stack">
      <p>
        <a href="/app/">← Collections</a>
      </p>
      <h1>{title}</h1>
      {!id && <p>Your own documents, outside any collection. Only you can see and ask about them.</p>}
      <Ask collectionId={id} />
      <Documents collectionId={id} />
      {collection && !collection.shared && <Sharing collectionId={collection.id} />}
      {id && <Quality collectionId={id} />}
    </main>
  );
}
