import { useMutation, useQuery, useQueryClient } from '@tanstack/preact-query';
import { useRef, useState } from 'preact/hooks';
import { call, fieldError, rag, type Schema } from '../api.ts';
import { ShownOnce } from '../Copy.tsx';
import { Failure } from '../Failure.tsx';
import { When } from '../when.tsx';
import { type Ask, CollectionOptions, collectionName } from './settings-shared.tsx';

type Listed = Schema<'ListedCollection'>;
type CreatedWebhook = Schema<'CreatedWebhook'>;
type DeliveryStatus = Schema<'WebhookDelivery'>['status'];

const EVENTS = [
  ['ingest.succeeded', 'a document was read and indexed in full'],
  ['ingest.failed', 'a document could not be added, or its job was cancelled'],
  ['ingest.partial', 'a document was indexed in part'],
  ['source.synced', 'a sync of one of your sources ended'],
] as const satisfies readonly (readonly [Schema<'WebhookEvent'>, string])[];
const ALL = 'all your uploads';

const STATUS = {
  pending: 'Waiting to be sent',
  delivered: 'Delivered',
  retrying: 'Failed for now; will retry',
  failed: 'Failed',
  skipped: 'Skipped: the webhook was paused',
} satisfies Record<DeliveryStatus, string>;

const UNSETTLED = new Set<DeliveryStatus>(['pending', 'retrying']);

/** A webhook's recent deliveries, loaded when its disclosure opens and kept fresh while it stays open. */
function Deliveries({ webhookId }: { webhookId: string }) {
  const listed = useQuery({
    queryKey: ['deliveries', webhookId],
    queryFn: () => call(rag.GET('/webhooks/{id}/deliveries', { params: { path: { id: webhookId } } })),
    refetchInterval: (query) => (query.state.data?.some((d) => UNSETTLED.has(d.status)) ? 2_000 : 10_000),
  });
  if (listed.isPending) return <p>Loading…</p>;
  if (listed.error) return <Failure error={listed.error} />;
  if (listed.data.length === 0) return <p>None yet: one is made each time one of your uploads ends.</p>;
  return (
    <ul class="plain deliveries" aria-label="Deliveries">
      {listed.data.map((delivery) => (
        <li key={delivery.id} data-status={delivery.status}>
          <strong class={delivery.status === 'failed' ? 'error' : undefined}>{STATUS[delivery.status]}</strong>{' '}
          <span class="badge">{delivery.event}</span>
          <dl class="facts">
            <div>
              <dt>Document</dt>
              <dd class="url">{delivery.source}</dd>
            </div>
            <div>
              <dt>Job</dt>
              <dd>
                <code title={delivery.job_id}>{delivery.job_id.slice(0, 8)}</code>
              </dd>
            </div>
            <div>
              <dt>Attempts</dt>
              <dd>{delivery.attempts}</dd>
            </div>
            {delivery.response_status !== null && (
              <div>
                <dt>Last answer</dt>
                <dd>HTTP {delivery.response_status}</dd>
              </div>
            )}
            {delivery.last_error && (
              <div>
                <dt>Last error</dt>
                <dd>{delivery.last_error}</dd>
              </div>
            )}
            {delivery.next_retry_at && (
              <div>
                <dt>Next try</dt>
                <dd>{Date.parse(delivery.next_retry_at) <= Date.now() ? 'due now' : <When iso={delivery.next_retry_at} />}</dd>
              </div>
            )}
            <div>
              <dt>Since</dt>
              <dd>
                <When iso={delivery.created_at} />
              </dd>
            </div>
          </dl>
        </li>
      ))}
    </ul>
  );
}

function WebhookRow({
  hook,
  collections,
  ask,
  onChanged,
  onDeleted,
  onSecret,
}: {
  hook: Schema<'Webhook'>;
  collections: Listed[] | undefined;
  ask: Ask;
  onChanged: () => Promise<unknown>;
  onDeleted: () => void;
  onSecret: (hook: CreatedWebhook) => void;
}) {
  const [open, setOpen] = useState(false);
  const path = { id: hook.id };
  const toggle = useMutation({
    mutationFn: (active: boolean) => call(rag.PATCH('/webhooks/{id}', { params: { path }, body: { active } })),
    onSuccess: onChanged,
  });
  const remove = useMutation({
    mutationFn: () => call(rag.DELETE('/webhooks/{id}', { params: { path } })),
    onSuccess: async () => {
      await onChanged();
      onDeleted();
    },
  });
  const rotate = useMutation({
    mutationFn: () => call(rag.POST('/webhooks/{id}/rotate-secret', { params: { path } })),
    onSuccess: onSecret,
  });
  const action = hook.active ? 'Pause' : 'Resume';
  return (
    <li class="card" data-active={hook.active}>
      <div class="grow stack-tight">
        <strong class="url">{hook.url}</strong>
        <span class="row tight">
          {hook.events.map((event) => (
            <span key={event} class="badge">
              {event}
            </span>
          ))}
        </span>
        <dl class="facts">
          <div>
            <dt>For</dt>
            <dd>{collectionName(collections, hook.collection_id, ALL)}</dd>
          </div>
          <div>
            <dt>State</dt>
            <dd>{hook.active ? 'active' : <strong>paused</strong>}</dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>
              <When iso={hook.created_at} />
            </dd>
          </div>
        </dl>
      </div>
      <span class="row tight">
        <button
          type="button"
          class="secondary"
          aria-label={`${action} webhook ${hook.url}`}
          disabled={toggle.isPending}
          onClick={() => toggle.mutate(!hook.active)}
        >
          {action}
        </button>
        <button
          type="button"
          class="secondary"
          aria-label={`New secret for webhook ${hook.url}`}
          disabled={rotate.isPending}
          onClick={() =>
            ask({
              title: 'Replace the signing secret?',
              body: `From now on every delivery to ${hook.url}, retries included, is signed with a new secret, shown once. The current secret signs nothing more: update your receiver straight away.`,
              action: 'Replace secret',
              run: () => rotate.mutate(),
            })
          }
        >
          New secret
        </button>
        <button
          type="button"
          class="danger"
          aria-label={`Delete webhook ${hook.url}`}
          onClick={() =>
            ask({
              title: 'Delete this webhook?',
              body: `${hook.url} gets no more deliveries; their records go with it, and deliveries not yet made are dropped. This cannot be undone.`,
              action: 'Delete webhook',
              run: () => remove.mutate(),
            })
          }
        >
          Delete
        </button>
      </span>
      <Failure error={toggle.error ?? rotate.error ?? remove.error} />
      <details class="wide" onToggle={(event) => setOpen(event.currentTarget.open)}>
        <summary>Deliveries</summary>
        {open && <Deliveries webhookId={hook.id} />}
      </details>
    </li>
  );
}

/** The caller's webhooks: registered with a URL, events and a collection; the secret shown once; paused, deleted, watched. */
export function Webhooks({ collections, ask }: { collections: Listed[] | undefined; ask: Ask }) {
  const queries = useQueryClient();
  const listed = useQuery({ queryKey: ['webhooks'], queryFn: () => call(rag.GET('/webhooks')) });
  const refresh = () => queries.invalidateQueries({ queryKey: ['webhooks'] });
  const heading = useRef<HTMLHeadingElement>(null);
  const urlField = useRef<HTMLInputElement>(null);
  const [made, setMade] = useState<CreatedWebhook | null>(null);
  const [noEvent, setNoEvent] = useState(false);
  const create = useMutation({
    mutationFn: (body: Schema<'CreateWebhook'>) => call(rag.POST('/webhooks', { body })),
    onSuccess: (hook) => {
      setMade(hook);
      return refresh();
    },
    onError: (error) => {
      if (fieldError(error, 'url')) urlField.current?.focus();
    },
  });
  const urlError = fieldError(create.error, 'url');

  return (
    <section aria-labelledby="webhooks-title" class="stack">
      <h2 id="webhooks-title" ref={heading} tabIndex={-1}>
        Webhooks
      </h2>
      <p>When one of your uploads has been read (or could not be), the service POSTs a signed JSON message to your URL.</p>
      <form
        class="stack panel"
        aria-label="New webhook"
        onSubmit={(event) => {
          event.preventDefault();
          const form = event.currentTarget;
          const data = new FormData(form);
          const checked = data.getAll('events');
          const events = EVENTS.map(([event]) => event).filter((event) => checked.includes(event));
          setNoEvent(events.length === 0);
          if (events.length === 0) {
            form.querySelector<HTMLInputElement>('input[name="events"]')?.focus();
            return;
          }
          create.mutate(
            { url: String(data.get('url')).trim(), events, collection_id: String(data.get('collection') ?? '') || null },
            { onSuccess: () => form.reset() },
          );
        }}
      >
        <h3>New webhook</h3>
        <div class="stack-tight">
          <label>
            URL
            <input
              ref={urlField}
              name="url"
              type="url"
              required
              maxLength={2048}
              placeholder="https://example.com/hooks/rag"
              aria-invalid={urlError ? true : undefined}
              aria-describedby={urlError ? 'webhook-url-error webhook-url-hint' : 'webhook-url-hint'}
            />
          </label>
          {urlError && (
            <span id="webhook-url-error" class="error">
              {urlError}
            </span>
          )}
          <span id="webhook-url-hint" class="hint">
            http or https on the standard ports, at a public address. Redirects are not followed.
          </span>
        </div>
        <fieldset onChange={() => setNoEvent(false)} aria-describedby={noEvent ? 'webhook-event-error' : undefined}>
          <legend>Events</legend>
          {EVENTS.map(([event, words]) => (
            <label key={event} class="check">
              <input type="checkbox" name="events" value={event} defaultChecked />
              <span>
                <code>{event}</code>: {words}
              </span>
            </label>
          ))}
          {noEvent && (
            <p id="webhook-event-error" class="error" role="alert">
              Choose at least one event.
            </p>
          )}
        </fieldset>
        <label>
          Collection
          <select name="collection">
            <CollectionOptions listed={collections} none="All your uploads" />
          </select>
        </label>
        <p>
          <button type="submit" disabled={create.isPending}>
            Register webhook
          </button>
        </p>
        {!urlError && <Failure error={create.error} />}
      </form>
      {made && (
        <ShownOnce
          title={`The signing secret for ${made.url}`}
          label="Signing secret"
          what="signing secret"
          value={made.secret}
          onDone={() => setMade(null)}
        >
          <p>
            Every delivery is signed in the Standard Webhooks style: <code>webhook-signature: v1,&lt;base64&gt;</code> is the
            HMAC-SHA-256 of <code>webhook-id</code>, <code>webhook-timestamp</code> and the raw request body, joined by dots,
            under the bytes this secret encodes after <code>whsec_</code>. Check it over the body's bytes as they arrive, before
            parsing the JSON; refuse a timestamp more than 5 minutes off, and accept each <code>webhook-id</code> once (it is the
            same on every retry). The README's <code>verifyWebhook</code> does all three. The older{' '}
            <code>X-Service-Signature</code> covers the body only, so it cannot tell a replayed delivery from a new one.
          </p>
        </ShownOnce>
      )}
      <h3>Your webhooks</h3>
      {listed.isPending && <p>Loading…</p>}
      <Failure error={listed.error} />
      {listed.data?.length === 0 && <p>No webhooks yet.</p>}
      <ul class="cards" aria-label="Webhooks">
        {listed.data?.map((hook) => (
          <WebhookRow
            key={hook.id}
            hook={hook}
            collections={collections}
            ask={ask}
            onChanged={refresh}
            onDeleted={() => {
              if (made?.id === hook.id) setMade(null);
              heading.current?.focus();
            }}
            onSecret={setMade}
          />
        ))}
      </ul>
    </section>
  );
}
