import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Failure } from '../Failure.tsx';

interface Collection {
  id: string;
  name: string;
  created_at: string;
  shared?: true;
  permission?: 'query' | 'ingest';
}

/** The caller's collections, owned and shared; create one, or delete one after saying what goes with it. */
export function Collections() {
  const queries = useQueryClient();
  const listed = useQuery({ queryKey: ['collections'], queryFn: () => api<Collection[]>('GET', '/collections/') });
  const refresh = () => queries.invalidateQueries({ queryKey: ['collections'] });
  const create = useMutation({
    mutationFn: (name: string) => api<Collection>('POST', '/collections/', { name }),
    onSuccess: refresh,
  });
  const remove = useMutation({ mutationFn: (id: string) => api('DELETE', `/collections/${id}`), onSuccess: refresh });
  const [doomed, setDoomed] = useState<Collection | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);

  function ask(collection: Collection) {
    setDoomed(collection);
    dialog.current?.showModal();
  }

  return (
    <main>
      <h1>Collections</h1>
      <p>
        <a href="/app/personal">Personal space</a>: your own documents, outside any collection.
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
            {!collection.shared && (
              <button type="button" class="danger" onClick={() => ask(collection)} aria-label={`Delete ${collection.name}`}>
                Delete
              </button>
            )}
          </li>
        ))}
      </ul>
      <Failure error={remove.error} />
      <dialog ref={dialog} aria-labelledby="delete-title" onClose={() => setDoomed(null)}>
        <form method="dialog" class="stack">
          <h2 id="delete-title">Delete “{doomed?.name}”?</h2>
          <p>
            Its documents and their index, its chat sessions, its evaluation records and its invite links are deleted, and its
            members lose access. This cannot be undone.
          </p>
          <div class="row">
            <button value="cancel" type="submit">
              Keep it
            </button>
            <button
              class="danger"
              type="submit"
              value="delete"
              onClick={() => {
                if (doomed) remove.mutate(doomed.id);
              }}
            >
              Delete collection
            </button>
          </div>
        </form>
      </dialog>
    </main>
  );
}
