import { useModal } from '../modal.ts';
import type { Doc } from './api.ts';
import { plural } from './format.ts';

/** Asks before documents are deleted, naming them and what goes with them. */
export function DeleteDialog({ doomed, onConfirm, onClose }: { doomed: Doc[]; onConfirm: () => void; onClose: () => void }) {
  const dialog = useModal(doomed.length > 0);
  const one = doomed.length === 1;
  const what = one ? `“${doomed[0]?.name}”` : plural(doomed.length, 'document');
  return (
    <dialog ref={dialog} aria-labelledby="delete-documents-title" onClose={onClose}>
      <form method="dialog" class="stack">
        <h2 id="delete-documents-title">Delete {what}?</h2>
        {doomed.length > 1 && (
          <ul class="doomed">
            {doomed.map((doc) => (
              <li key={doc.id}>{doc.name}</li>
            ))}
          </ul>
        )}
        <p>
          {one ? 'Its file and its passages are' : 'Their files and passages are'} deleted: questions no longer find or cite{' '}
          {one ? 'it' : 'them'}. This cannot be undone.
        </p>
        <div class="row">
          <button type="submit" value="keep">
            Keep {one ? 'it' : 'them'}
          </button>
          <button type="submit" value="delete" class="danger" onClick={onConfirm}>
            Delete {one ? 'document' : plural(doomed.length, 'document')}
          </button>
        </div>
      </form>
    </dialog>
  );
}
