import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRef, useState } from 'preact/hooks';
import { call, fieldError, rag, type Schema } from '../api.ts';
import { CopyButton, ShownOnce } from '../Copy.tsx';
import { Failure } from '../Failure.tsx';
import { When } from '../when.tsx';
import { type Ask, CollectionOptions, collectionName } from './settings-shared.tsx';

type CreatedKey = Schema<'CreatedApiKey'>;

const SCOPES = [
  ['query', 'ask questions and search; chat sessions'],
  ['ingest', 'upload files and web pages, follow their jobs, delete documents'],
  ['collections:read', 'list collections, their documents and quality records'],
  ['collections:write', 'create and delete collections'],
] as const satisfies readonly (readonly [Schema<'Scope'>, string])[];
const ALL = 'all collections';

const pad = (n: number) => String(n).padStart(2, '0');
/** Today as the date field writes it (YYYY-MM-DD), in the browser's time zone. */
function today(): string {
  const now = new Date();
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

/** One line of curl that uses the new key for something its scopes allow. */
function curlExample(made: CreatedKey): string {
  const key = `-H "X-API-Key: ${made.key}"`;
  const origin = location.origin;
  const collection = made.collection_id ? `,"collection_id":"${made.collection_id}"` : '';
  if (made.scopes.includes('query')) {
    return `curl -s ${origin}/query/search ${key} -H 'Content-Type: application/json' -d '{"question":"What is this about?"${collection}}'`;
  }
  if (made.scopes.includes('collections:read')) return `curl -s ${origin}/collections/ ${key}`;
  if (made.scopes.includes('ingest')) {
    const where = made.collection_id ? `?collection_id=${made.collection_id}` : '';
    return `curl -s "${origin}/ingest/${where}" ${key} -F file=@notes.pdf`;
  }
  return `curl -s ${origin}/collections/ ${key} -H 'Content-Type: application/json' -d '{"name":"Made by a script"}'`;
}

/** The caller's API keys: made with scopes (and a collection, an expiry), shown once, listed, revoked. */
export function ApiKeys({ collections, ask }: { collections: Schema<'ListedCollection'>[] | undefined; ask: Ask }) {
  const queries = useQueryClient();
  const listed = useQuery({ queryKey: ['keys'], queryFn: () => call(rag.GET('/keys')) });
  const refresh = () => queries.invalidateQueries({ queryKey: ['keys'] });
  const heading = useRef<HTMLHeadingElement>(null);
  const [made, setMade] = useState<CreatedKey | null>(null);
  const [noScope, setNoScope] = useState(false);
  const create = useMutation({
    mutationFn: (body: Schema<'CreateApiKey'>) => call(rag.POST('/keys', { body })),
    onSuccess: (key) => {
      setMade(key);
      return refresh();
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => call(rag.DELETE('/keys/{id}', { params: { path: { id } } })),
    onSuccess: async (_answer, id) => {
      if (made?.id === id) setMade(null);
      await refresh();
      heading.current?.focus();
    },
  });
  const nameError = fieldError(create.error, 'name');
  const expiryError = fieldError(create.error, 'expires_at');

  return (
    <section aria-labelledby="keys-title" class="stack">
      <h2 id="keys-title" ref={heading} tabIndex={-1}>
        API keys
      </h2>
      <p>
        A program sends its key as the <code>X-API-Key</code> header. It acts as you, but only within its scopes, and never with
        more access than you have.
      </p>
      <form
        class="stack panel"
        aria-label="New API key"
        onSubmit={(event) => {
          event.preventDefault();
          const form = event.currentTarget;
          const data = new FormData(form);
          const checked = data.getAll('scopes');
          const scopes = SCOPES.map(([scope]) => scope).filter((scope) => checked.includes(scope));
          setNoScope(scopes.length === 0);
          if (scopes.length === 0) {
            form.querySelector<HTMLInputElement>('input[name="scopes"]')?.focus();
            return;
          }
          const until = String(data.get('until') ?? '');
          create.mutate(
            {
              name: String(data.get('name')).trim(),
              scopes,
              collection_id: String(data.get('collection') ?? '') || null,
              // The end of the chosen day, in the browser's time zone.
              expires_at: until ? new Date(`${until}T23:59:59.999`).toISOString() : null,
            },
            { onSuccess: () => form.reset() },
          );
        }}
      >
        <h3>New key</h3>
        <div class="stack-tight">
          <label>
            Name
            <input
              name="name"
              required
              maxLength={100}
              placeholder="nightly sync"
              aria-invalid={nameError ? true : undefined}
              aria-describedby={nameError ? 'key-name-error' : undefined}
            />
          </label>
          {nameError && (
            <span id="key-name-error" class="error">
              {nameError}
            </span>
          )}
        </div>
        <fieldset onChange={() => setNoScope(false)} aria-describedby={noScope ? 'key-scope-error' : undefined}>
          <legend>Scopes: what the key may do</legend>
          {SCOPES.map(([scope, words]) => (
            <label key={scope} class="check">
              <input type="checkbox" name="scopes" value={scope} />
              <span>
                <code>{scope}</code>: {words}
              </span>
            </label>
          ))}
          {noScope && (
            <p id="key-scope-error" class="error" role="alert">
              Choose at least one scope.
            </p>
          )}
        </fieldset>
        <div class="row top">
          <label class="grow">
            Collection
            <select name="collection">
              <CollectionOptions listed={collections} none="All collections you can use" />
            </select>
          </label>
          <div class="grow stack-tight">
            <label>
              Works until (optional)
              <input
                type="date"
                name="until"
                min={today()}
                aria-invalid={expiryError ? true : undefined}
                aria-describedby={expiryError ? 'key-until-error key-until-hint' : 'key-until-hint'}
              />
            </label>
            <span id="key-until-hint" class="hint">
              The end of that day, your time. Empty: until you revoke it.
            </span>
            {expiryError && (
              <span id="key-until-error" class="error">
                {expiryError}
              </span>
            )}
          </div>
        </div>
        <p>
          <button type="submit" disabled={create.isPending}>
            Create key
          </button>
        </p>
        {!nameError && !expiryError && <Failure error={create.error} />}
      </form>
      {made && (
        <ShownOnce
          title={`Your new key “${made.name}”`}
          label="API key"
          what="API key"
          value={made.key}
          onDone={() => setMade(null)}
        >
          <p>Try it, in a terminal:</p>
          <pre class="command">
            <code>{curlExample(made)}</code>
          </pre>
          <p>
            <CopyButton text={curlExample(made)} what="example command" />
          </p>
        </ShownOnce>
      )}
      <h3>Your keys</h3>
      {listed.isPending && <p>Loading…</p>}
      <Failure error={listed.error} />
      {listed.data?.length === 0 && <p>No keys yet.</p>}
      <ul class="cards" aria-label="API keys">
        {listed.data?.map((key) => {
          const expired = key.expires_at !== null && Date.parse(key.expires_at) <= Date.now();
          return (
            <li key={key.id} class="card">
              <div class="grow stack-tight">
                <span>
                  <strong>{key.name}</strong> <code class="tag">{key.prefix}…</code>
                </span>
                <span class="row tight">
                  {key.scopes.map((scope) => (
                    <span key={scope} class="badge">
                      {scope}
                    </span>
                  ))}
                </span>
                <dl class="facts">
                  <div>
                    <dt>Collection</dt>
                    <dd>{collectionName(collections, key.collection_id, ALL)}</dd>
                  </div>
                  <div>
                    <dt>Expires</dt>
                    <dd>
                      {key.expires_at === null ? (
                        'never'
                      ) : expired ? (
                        <strong class="error">expired</strong>
                      ) : (
                        <When iso={key.expires_at} date />
                      )}
                    </dd>
                  </div>
                  <div>
                    <dt>Last used</dt>
                    <dd>{key.last_used_at ? <When iso={key.last_used_at} /> : 'never'}</dd>
                  </div>
                  <div>
                    <dt>Created</dt>
                    <dd>
                      <When iso={key.created_at} />
                    </dd>
                  </div>
                </dl>
              </div>
              <button
                type="button"
                class="danger"
                aria-label={`Revoke key ${key.name}`}
                onClick={() =>
                  ask({
                    title: `Revoke the key “${key.name}”?`,
                    body: `Programs using it (${key.prefix}…) are refused from their next request. This cannot be undone.`,
                    action: 'Revoke key',
                    run: () => revoke.mutate(key.id),
                  })
                }
              >
                Revoke
              </button>
            </li>
          );
        })}
      </ul>
      <Failure error={revoke.error} />
    </section>
  );
}
