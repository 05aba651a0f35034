import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useLocation } from 'preact-iso';
import { call, rag } from '../api.ts';
import { Failure } from '../Failure.tsx';

/** A chat's own controls, out of the way under its title: rename it, give a member a copy, delete it. */
export function ChatActions({ collectionId, sessionId, title }: { collectionId: string; sessionId: string; title: string }) {
  const { route } = useLocation();
  const queries = useQueryClient();
  const path = { collection_id: collectionId, session_id: sessionId };
  const refresh = () => queries.invalidateQueries({ queryKey: ['sessions', collectionId] });
  const members = useQuery({
    queryKey: ['participants', collectionId],
    queryFn: () => call(rag.GET('/chat/{collection_id}/members', { params: { path: { collection_id: collectionId } } })),
  });
  const rename = useMutation({
    mutationFn: (next: string) =>
      call(rag.PATCH('/chat/{collection_id}/sessions/{session_id}', { params: { path }, body: { title: next } })),
    onSuccess: refresh,
  });
  const share = useMutation({
    mutationFn: (target: string) =>
      call(rag.POST('/chat/{collection_id}/sessions/{session_id}/share', { params: { path }, body: { target_user_id: target } })),
  });
  const remove = useMutation({
    mutationFn: () => call(rag.DELETE('/chat/{collection_id}/sessions/{session_id}', { params: { path } })),
    onSuccess: async () => {
      await refresh();
      route(`/app/c/${collectionId}`);
    },
  });

  return (
    <details class="chat-actions">
      <summary>Chat options</summary>
      <div class="stack panel">
        <form
          class="row"
          onSubmit={(event) => {
            event.preventDefault();
            const next = String(new FormData(event.currentTarget).get('title')).trim();
            if (next) rename.mutate(next);
          }}
        >
          <label class="grow">
            Rename this chat
            <input name="title" maxLength={100} required defaultValue={title} />
          </label>
          <button type="submit" disabled={rename.isPending}>
            Rename
          </button>
        </form>
        {(members.data?.length ?? 0) > 0 && (
          <form
            class="row"
            onSubmit={(event) => {
              event.preventDefault();
              share.mutate(String(new FormData(event.currentTarget).get('target')));
            }}
          >
            <label class="grow">
              Share a copy with
              <select name="target">
                {members.data?.map((m) => (
                  <option key={m.user_id} value={m.user_id}>
                    {m.email ?? m.user_id} ({m.role})
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" disabled={share.isPending}>
              Share
            </button>
          </form>
        )}
        {share.isSuccess && <p role="status">Shared.</p>}
        <div>
          <button
            type="button"
            class="danger"
            onClick={() => {
              if (confirm(`Delete the chat “${title}” and its messages?`)) remove.mutate();
            }}
          >
            Delete this chat
          </button>
        </div>
        <Failure error={rename.error ?? share.error ?? remove.error ?? members.error} />
      </div>
    </details>
  );
}
