import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { call, rag } from '../api.ts';
import { type Listed, useCollections } from '../collections.ts';
import { Failure } from '../Failure.tsx';
import { DeleteCollection } from './DeleteCollection.tsx';

/** The caller's collections, owned and shared; create one, or delete one after saying what goes with it. */
export function Collections() {
  const queries = useQueryClient();
  const listed = useCollections();
  const create = useMutation({
    mutationFn: (name: string) => call(rag.POST('/collections', { body: { name } })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['collections'] }),
  });
  const [doomed, setDoomed] = useState<Listed | null>(null);

  return (
    <section class="stack page">
      <h1>Collections</h1>
      <p>
        A collection holds documents that you, and the people you invite, ask questions about. Your{' '}
        <a href="/app/personal">personal space</a> holds your own documents, outside any collection.
      </p>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          const form = event.currentTarget;
          const name = String(new FormData(form).get('name')).trim();
          if (name) create.mutate(name, { onSuccess: () => form.reset() });
        }}
      >
        <label class="grow">
          New collection
          <input name="name" maxLength={200} required placeholder="Research papers" />
        </label>
        <button type="submit" disabled={create.isPending}>
          Create
        </button>
      </form>
      <Failure error={create.error} />
      {listed.isPending && <p>Loading…</p>}
      <Failure error={listed.error} />
      {listed.data && listed.data.length === 0 && <p>No collections yet. Create one to upload documents into.</p>}
      <ul class="cards" aria-label="Your collections">
        {listed.data?.map((collection) => (
          <li key={collection.id} class="card">
            <span class="grow">
              <a href={`/app/c/${collection.id}`}>
                <strong>{collection.name}</strong>
              </a>{' '}
              <span class="badge">{collection.shared ? `shared with you · ${collection.permission}` : 'owner'}</span>
            </span>
            <a href={`/app/c/${collection.id}/documents`}>Documents</a>
            {!collection.shared && (
              <button type="button" class="danger" onClick={() => setDoomed(collection)} aria-label={`Delete ${collection.name}`}>
                Delete
              </button>
            )}
          </li>
        ))}
      </ul>
      <DeleteCollection collection={doomed} onClose={() => setDoomed(null)} />
    </section>
  );
}
