import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Failure } from '../Failure.tsx';

interface Share {
  id: string;
  token_prefix: string;
  permission: 'query' | 'ingest';
  uses: number;
  created_at: string;
}
interface Member {
  user_id: string;
  email: string | null;
  permission: 'query' | 'ingest';
}

const PERMISSIONS = { query: 'ask questions', ingest: 'ask questions and add documents' };

/** The owner's sharing: invite links (made, copied, revoked) and the members, who can be removed. */
export function Sharing({ collectionId }: { collectionId: string }) {
  const queries = useQueryClient();
  const key = ['shares', collectionId];
  const listed = useQuery({
    queryKey: key,
    queryFn: () => api<{ shares: Share[]; members: Member[] }>('GET', `/collections/${collectionId}/shares`),
  });
  const refresh = () => queries.invalidateQueries({ queryKey: key });
  const [made, setMade] = useState<{ url: string; copied: boolean } | null>(null);
  const create = useMutation({
    mutationFn: (permission: string) =>
      api<{ share_token: string }>('POST', `/collections/${collectionId}/shares`, { permission }),
    onSuccess: ({ share_token }) => {
      setMade({ url: `${location.origin}/join/${share_token}`, copied: false });
      return refresh();
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => api('DELETE', `/collections/${collectionId}/shares/${id}`),
    onSuccess: refresh,
  });
  const removeMember = useMutation({
    mutationFn: (id: string) => api('DELETE', `/collections/${collectionId}/members/${id}`),
    onSuccess: refresh,
  });
  const failure = create.error ?? revoke.error ?? removeMember.error ?? listed.error;

  return (
    <section aria-labelledby="share-title" class="stack">
      <h2 id="share-title">Sharing</h2>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate(String(new FormData(event.currentTarget).get('permission')));
        }}
      >
        <label class="grow">
          New invite link that lets people
          <select name="permission">
            {Object.entries(PERMISSIONS).map(([value, words]) => (
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
      <h3>Invite links</h3>
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
      <h3>Members</h3>
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
