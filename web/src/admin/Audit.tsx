import { keepPreviousData, useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { useCollections } from '../collections.ts';
import { Failure } from '../Failure.tsx';
import { shortId } from '../usage/format.ts';
import { TableScroll } from '../usage/TableScroll.tsx';
import { When } from '../when.tsx';
import { ACTIONS, AUDIT_ENTRIES, type AuditAction, type AuditEntry, adminKey, listAudit } from './api.ts';

const TARGETS: Record<AuditEntry['target_type'], string> = {
  api_key: 'API key',
  share: 'Invite link',
  user: 'User',
  collection: 'Collection',
  webhook: 'Webhook',
  source: 'Source',
  document: 'Document',
  job: 'Ingestion job',
};

/** What was set or changed, as `field: value` pairs; the API leaves out keys, secrets and tokens. */
const diffText = (diff: AuditEntry['diff']) =>
  Object.entries(diff)
    .map(([field, value]) => `${field}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join('; ');

/** The latest audit entries of everyone, filtered by action: who did what to what, and when. */
export function AuditSection({ emails, me }: { emails: ReadonlyMap<string, string>; me: string }) {
  const [action, setAction] = useState<AuditAction | ''>('');
  const collections = useCollections();
  const entries = useQuery({
    queryKey: [...adminKey, 'audit', action],
    queryFn: () => listAudit(action),
    placeholderData: keepPreviousData,
  });
  const collectionName = (id: string | null) =>
    id === null ? null : (collections.data?.find((c) => c.id === id)?.name ?? `collection ${shortId(id)}`);
  const rows = entries.data ?? [];
  return (
    <section class="stack" aria-labelledby="admin-audit">
      <h2 id="admin-audit">Audit log</h2>
      <div class="row">
        <label>
          Action
          <select value={action} onChange={(event) => setAction(event.currentTarget.value as AuditAction | '')}>
            <option value="">Every action</option>
            {(Object.keys(ACTIONS) as AuditAction[]).map((name) => (
              <option key={name} value={name}>
                {ACTIONS[name]}
              </option>
            ))}
          </select>
        </label>
        <p class="hint">The latest {AUDIT_ENTRIES}, newest first.</p>
      </div>
      {entries.isPending && <p>Loading…</p>}
      <Failure error={entries.error} />
      {entries.data && rows.length === 0 && <p>No entries{action ? ' of this action' : ''}.</p>}
      {rows.length > 0 && (
        <TableScroll label="Audit entries">
          <table class="audit">
            <caption class="visually-hidden">Audit entries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((entry) => {
                const where = collectionName(entry.collection_id);
                return (
                  <tr key={entry.id} data-action={entry.action}>
                    <td>
                      <When iso={entry.created_at} />
                    </td>
                    <td title={entry.actor_id}>
                      {entry.actor_id === me ? 'You' : (emails.get(entry.actor_id) ?? `User ${shortId(entry.actor_id)}`)}
                      {entry.api_key_id && <span class="hint"> with an API key</span>}
                    </td>
                    <td>
                      {ACTIONS[entry.action] ?? entry.action} <code class="tag">{entry.action}</code>
                    </td>
                    <td title={entry.target_id}>
                      {TARGETS[entry.target_type] ?? entry.target_type} {shortId(entry.target_id)}
                      {where && entry.target_type !== 'collection' && <span class="hint"> in {where}</span>}
                    </td>
                    <td class="diff">{diffText(entry.diff)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableScroll>
      )}
    </section>
  );
}
