import { plural } from '../documents/format.ts';
import { useModal } from '../modal.ts';
import type { Source } from './api.ts';

/** Asks before a source goes, saying how many documents go with it: every page it made. */
export function DeleteSourceDialog({
  doomed,
  onConfirm,
  onClose,
}: {
  doomed: Source | null;
  onConfirm: (source: Source) => void;
  onClose: () => void;
}) {
  const dialog = useModal(doomed !== null);
  const documents = plural(doomed?.pages ?? 0, 'document');
  const one = doomed?.pages === 1;
  return (
    <dialog ref={dialog} aria-labelledby="delete-source-title" onClose={onClose}>
      <form method="dialog" class="stack">
        <h2 id="delete-source-title">
          Delete the source <span class="url">{doomed?.url}</span>?
        </h2>
        <p>
          {doomed?.pages
            ? `Deleting it deletes ${documents}, every page it keeps, with ${one ? 'its file and passages' : 'their files and passages'}: questions no longer find or cite ${one ? 'it' : 'them'}.`
            : 'It keeps no pages yet, so no document goes with it.'}{' '}
          A sync under way stops. This cannot be undone.
        </p>
        <div class="row">
          <button type="submit" value="keep">
            Keep it
          </button>
          <button type="submit" value="delete" class="danger" onClick={() => doomed && onConfirm(doomed)}>
            {doomed?.pages ? `Delete source and ${documents}` : 'Delete source'}
          </button>
        </div>
      </form>
    </dialog>
  );
}
