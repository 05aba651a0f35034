import { useState } from 'preact/hooks';
import { useCollections } from '../collections.ts';
import { useModal } from '../modal.ts';
import { ApiKeys } from './ApiKeys.tsx';
import type { Confirmation } from './settings-shared.tsx';
import { Webhooks } from './Webhooks.tsx';

/** The confirmation dialog, one for the page: "Keep it" has the focus, Escape keeps it too. */
function Confirm({ asked, onClose }: { asked: Confirmation | null; onClose: () => void }) {
  const dialog = useModal(asked !== null);
  return (
    <dialog ref={dialog} aria-labelledby="confirm-title" onClose={onClose}>
      <form method="dialog" class="stack">
        <h2 id="confirm-title">{asked?.title}</h2>
        <p>{asked?.body}</p>
        <div class="row">
          <button type="submit" value="cancel">
            Keep it
          </button>
          <button type="submit" value="confirm" class="danger" onClick={() => asked?.run()}>
            {asked?.action}
          </button>
        </div>
      </form>
    </dialog>
  );
}

/** /app/settings: the caller's API keys and webhooks, for the programs that use the service on their behalf. */
export function Settings() {
  const collections = useCollections();
  const [asked, setAsked] = useState<Confirmation | null>(null);
  // In the shell's <main>, which also gives the way back.
  return (
    <section class="stack page">
      <h1>API keys &amp; webhooks</h1>
      <p>
        For your programs: a key lets a script use the service as you, within the scopes you choose; a webhook tells a server of
        yours when an upload has been read. The <a href="/docs">API reference</a> describes every operation.
      </p>
      <ApiKeys collections={collections.data} ask={setAsked} />
      <Webhooks collections={collections.data} ask={setAsked} />
      <Confirm asked={asked} onClose={() => setAsked(null)} />
    </section>
  );
}
