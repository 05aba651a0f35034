import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useCollections } from '../collections.ts';
import { DeleteCollection } from './DeleteCollection.tsx';

/** A collection's settings: who the reader is in it, and, for its owner, deleting it. */
export function CollectionSettings({ collectionId, owner }: { collectionId: string; canWrite: boolean; owner: boolean }) {
  const { route } = useLocation();
  const collection = useCollections().data?.find((c) => c.id === collectionId);
  const [doomed, setDoomed] = useState(false);
  if (!collection) return null;
  return (
    <section class="stack page">
      <h1>Settings</h1>
      <dl class="facts">
        <div>
          <dt>Name</dt>
          <dd>{collection.name}</dd>
        </div>
        <div>
          <dt>You are</dt>
          <dd>
            {owner ? 'its owner' : `a member who may ${collection.permission === 'ingest' ? 'ask and add documents' : 'ask'}`}
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{new Date(collection.created_at).toLocaleDateString()}</dd>
        </div>
      </dl>
      <p>
        The retrieval settings and the answers' scores are on the <a href={`/app/c/${collectionId}/quality`}>Quality</a> page.
      </p>
      {owner && (
        <section class="stack panel" aria-labelledby="danger-title">
          <h2 id="danger-title">Delete this collection</h2>
          <p>Its documents, chats, scores and invitations go with it.</p>
          <div>
            <button type="button" class="danger" onClick={() => setDoomed(true)}>
              Delete “{collection.name}”…
            </button>
          </div>
        </section>
      )}
      <DeleteCollection
        collection={doomed ? collection : null}
        onClose={() => setDoomed(false)}
        onGone={() => route('/app/collections')}
      />
    </section>
  );
}
