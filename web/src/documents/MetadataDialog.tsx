import { useModal } from '../modal.ts';
import type { Doc, Metadata } from './api.ts';
import { MetadataForm } from './MetadataForm.tsx';

/** Edits one document's metadata in a modal; the browser gives focus back to the button that opened it. */
export function MetadataDialog({
  doc,
  save,
  onClose,
}: {
  doc: Doc | null;
  save: (doc: Doc, metadata: Metadata) => Promise<unknown>;
  onClose: () => void;
}) {
  const dialog = useModal(doc !== null);
  return (
    <dialog ref={dialog} aria-labelledby="metadata-title" class="metadata-dialog" onClose={onClose}>
      {doc && (
        <MetadataForm
          key={doc.id}
          doc={doc}
          save={async (metadata) => {
            await save(doc, metadata);
            dialog.current?.close();
          }}
          onCancel={() => dialog.current?.close()}
        />
      )}
    </dialog>
  );
}
