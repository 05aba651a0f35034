import { useQueryClient } from '@tanstack/preact-query';
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { call, messageOf, rag } from '../api.ts';

/** /join/<token>: joins through the invite link, then opens the collection; or says why not. */
export function Join({ params }: { params: { token: string } }) {
  const { route } = useLocation();
  const queries = useQueryClient();
  const [outcome, setOutcome] = useState<string | null>(null);
  useEffect(() => {
    call(rag.POST('/collections/join/{share_token}', { params: { path: { share_token: params.token } } })).then(
      (joined) => {
        void queries.invalidateQueries({ queryKey: ['collections'] });
        if ('collection' in joined) route(`/app/c/${joined.collection.id}`, true);
        else if ('already_owner' in joined) setOutcome('This link is to one of your own collections.');
        else setOutcome(`You are already a member of this collection, with ${joined.permission} permission.`);
      },
      (error: unknown) => setOutcome(messageOf(error)),
    );
  }, [params.token]);
  return (
    <section class="narrow">
      <h1>Joining a collection</h1>
      <p role="status">{outcome ?? 'Joining…'}</p>
      {outcome && <a href="/app/collections">Go to your collections</a>}
    </section>
  );
}
