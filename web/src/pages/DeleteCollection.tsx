import { useMutation, useQueryClient } from '@tanstack/preact-query';
import { call, rag } from '../api.ts';
import { Failure } from '../Failure.tsx';
import { useModal } from '../modal.ts';

/** Asks before a collection is deleted, saying what goes with it; `onGone` runs once it is. */
export function DeleteCollection({
  collection,
  onClose,
  onGone,
}: {
  collection: { id: string; name: string } | null;
  onClose: () => void;
  onGone?: () => void;
}) {
  const queries = useQueryClient();
  const dialog = useModal(collection !== null);
  const remove = useMutation({
    mutationFn: (id: string) => call(rag.DELETE('/collections/{id}', { params: { path: { id } } })),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['collections'] });
      onGone?.();
    },
  });
  return (
    <>
      <Failure error={remove.error} />
      <dialog ref={dialog} aria-labelledby="delete-title" onClose={onClose}>
        <form method="dialog" class="stack">
          <h2 id="delete-title">Delete “{collection?.name}”?</h2>
          <p>
            Its documents and their index, its chat sessions, its evaluation records and its invite links are deleted, and its
            members lose access. This cannot be undone.
          </p>
          <div class="row">
            <button value="cancel" type="submit">
              Keep it
            </button>
            <button
              class="danger"
              type="submit"
              value="delete"
              onClick={() => {
                if (collection) remove.mutate(collection.id);
              }}
            >
              Delete collection
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}
