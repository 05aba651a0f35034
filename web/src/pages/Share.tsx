import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { call, rag, type Schema } from '../api.ts';
import { Failure } from '../Failure.tsx';

const PERMISSIONS = [
  ['query', 'ask questions'],
  ['ingest', 'ask questions and add documents'],
] as const satisfies readonly (readonly [Schema<'Permission'>, string])[];

/** /app/c/:id/sharing, the owner's: invite links (made, copied, revoked) and the members, who can be removed. */
export function Sharing({ collectionId }: { collectionId: string }) {
  const queries = useQueryClient();
  const key = ['shares', collectionId];
  const path = { id: collectionId };
  const listed = useQuery({
    queryKey: key,
    queryFn: () => call(rag.GET('/collections/{id}/shares', { params: { path } })),
  });
  const refresh = () => queries.invalidateQueries({ queryKey: key });
  const [made, setMade] = useState<{ url: string; copied: boolean } | null>(null);
  const create = useMutation({
    mutationFn: (permission: Schema<'Permission'>) =>
      call(rag.POST('/collections/{id}/shares', { params: { path }, body: { permission } })),
    onSuccess: ({ share_token }) => {
      setMade({ url: `${location.origin}/join/${share_token}`, copied: false });
      return refresh();
    },
  });
  const revoke = useMutation({
    mutationFn: (shareId: string) =>
      call(rag.DELETE('/collections/{id}/shares/{share_id}', { params: { path: { ...path, share_id: shareId } } })),
    onSuccess: refresh,
  });
  const removeMember = useMutation({
    mutationFn: (userId: string) =>
      call(rag.DELETE('/collections/{id}/members/{member_id}', { params: { path: { ...path, member_id: userId } } })),
    onSuccess: refresh,
  });
  const failure = create.error ?? revoke.error ?? removeMember.error ?? listed.error;

  return (
    <section aria-labelledby="share-title" class="stack page">
      <h1 id="share-title">Sharing</h1>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          const chosen = new FormData(event.currentTarget).get('permission');
          const permission = PERMISSIONS.find(([value]) => value === chosen)?.[0];
          if (permission) create.mutate(permission);
        }}
      >
        <label class="grow">
          New invite link that lets people
          <select name="permission">
            {PERMISSIONS.map(([value, words]) => (
              <option key={value} value={value}>
                {words} ({value})
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={create.isPending}>
          Create link
        </button>
      </form>
      {made && (
        <div class="row card" role="status">
          <label class="grow">
            The link, shown only now
            <input readOnly value={made.url} onFocus={(event) => event.currentTarget.select()} />
          </label>
          <button
            type="button"
            onClick={async () => {
              await navigator.clipboard.writeText(made.url);
              setMade({ ...made, copied: true });
            }}
          >
            {made.copied ? 'Copied' : 'Copy link'}
          </button>
        </div>
      )}
      <h2>Invite links</h2>
      {listed.data?.shares.length === 0 && <p>No links.</p>}
      <ul class="cards" aria-label="Invite links">
        {listed.data?.shares.map((share) => (
          <li key={share.id} class="card">
            <span class="grow">
              <code>{share.token_prefix}…</code> <span class="badge">{share.permission}</span> used {share.uses}{' '}
              {share.uses === 1 ? 'time' : 'times'}
            </span>
            <button
              type="button"
              class="danger"
              aria-label={`Revoke link ${share.token_prefix}`}
              onClick={() => revoke.mutate(share.id)}
            >
              Revoke
            </button>
          </li>
        ))}
      </ul>
      <h2>Members</h2>
      {listed.data?.members.length === 0 && <p>Nobody else yet.</p>}
      <ul class="cards" aria-label="Members">
        {listed.data?.members.map((member) => (
          <li key={member.user_id} class="card">
            <span class="grow">
              {member.email ?? member.user_id} <span class="badge">{member.permission}</span>
            </span>
            <button
              type="button"
              class="danger"
              aria-label={`Remove ${member.email ?? member.user_id}`}
              onClick={() => removeMember.mutate(member.user_id)}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      <Failure error={failure} />
    </section>
  );
}
