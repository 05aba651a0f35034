import { When } from '../when.tsx';
import type { Doc, Job } from './api.ts';
import { FileButton } from './FileButton.tsx';
import { dayText, sizeText, typeLabel } from './format.ts';
import { isRunning } from './jobs.ts';
import { entriesOf, valueText } from './metadata.ts';
import type { Replacing } from './replacing.ts';
import { StatusCell } from './StatusCell.tsx';
import { stateOf } from './status.ts';

/** What a row may do; `manage` (the owner's, with write access) shows the checkbox and the row's buttons. */
export interface RowActions {
  manage: boolean;
  selected: boolean;
  onSelect: (selected: boolean) => void;
  onEdit: () => void;
  onReplace: (file: File) => void;
  onDelete: () => void;
  onCancel?: (job: Job) => void;
}

export function DocumentRow({
  doc,
  jobs,
  replacing,
  actions,
}: {
  doc: Doc;
  jobs: Job[];
  replacing?: Replacing;
  actions: RowActions;
}) {
  const entries = entriesOf(doc.metadata);
  const state = stateOf(doc, jobs);
  const { status, newVersion } = state;
  // The API refuses to change a document while it, or a new version of it, is being indexed (409).
  const busy =
    status === 'running' || (newVersion !== undefined && isRunning(newVersion)) || Boolean(replacing && 'sent' in replacing);
  return (
    <tr>
      {actions.manage && (
        <td class="select">
          <input
            type="checkbox"
            checked={actions.selected}
            aria-label={`Select ${doc.name}`}
            onChange={(event) => actions.onSelect(event.currentTarget.checked)}
          />
        </td>
      )}
      <td class="name">
        {doc.open_url ? (
          <a href={doc.open_url} target="_blank" rel="noopener noreferrer" class="long">
            {doc.name}
          </a>
        ) : (
          <span class="long">{doc.name}</span>
        )}
        {doc.title && doc.title !== doc.name && <span class="title long">{doc.title}</span>}
      </td>
      <StatusCell doc={doc} state={state} replacing={replacing} onCancel={actions.onCancel} />
      <td data-label="Type" class="fact">
        {typeLabel(doc)}
      </td>
      <td data-label="Size" class="fact">
        {sizeText(doc.size_bytes)}
      </td>
      <td data-label="Chunks" class="fact">
        {doc.chunk_count}
      </td>
      <td data-label="Metadata">
        {entries.length > 0 && (
          <ul class="metadata" aria-label={`Metadata of ${doc.name}`}>
            {entries.map(([key, value]) => (
              // A long value is cut short on screen (all of it is read out); the whole of it shows on hover.
              <li key={key} class="badge" title={`${key}: ${valueText(value)}`}>
                {key}: {valueText(value)}
              </li>
            ))}
          </ul>
        )}
      </td>
      <td data-label="Added">
        <When iso={doc.created_at} />
        {doc.document_date && (
          <span class="dated">
            Dated <time dateTime={doc.document_date}>{dayText(doc.document_date)}</time>
          </span>
        )}
      </td>
      {actions.manage && (
        <td class="actions">
          <button
            type="button"
            class="secondary"
            aria-label={`Edit metadata of ${doc.name}`}
            onClick={actions.onEdit}
            disabled={busy}
          >
            Edit
          </button>
          <FileButton
            secondary
            disabled={busy}
            label={`Replace ${doc.name} with a new version`}
            onFiles={([file]) => file && actions.onReplace(file)}
          >
            Replace…
          </FileButton>
          <button type="button" class="danger" aria-label={`Delete ${doc.name}`} onClick={actions.onDelete}>
            Delete
          </button>
        </td>
      )}
    </tr>
  );
}
