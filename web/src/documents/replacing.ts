import { useState } from 'preact/hooks';
import { messageOf, uploadFile } from '../api.ts';
import { refusal } from '../files.ts';
import type { Doc } from './api.ts';

/** A new version's upload in one row: its bytes, or why it was refused. */
export type Replacing = { sent: number; size: number } | { refused: string };

/** New versions uploaded from their rows, by document id; once its job is listed, the job shows the progress instead. */
export function useReplacing(collectionId: string | null, refresh: () => Promise<unknown>) {
  const [replacing, setReplacing] = useState<Record<string, Replacing>>({});

  function replace(doc: Doc, file: File) {
    const refused = refusal(file);
    const set = (state: Replacing | null) =>
      setReplacing(({ [doc.id]: _, ...others }) => (state ? { ...others, [doc.id]: state } : others));
    if (refused) return set({ refused });
    set({ sent: 0, size: file.size });
    uploadFile(file, { collectionId, replaceDocumentId: doc.id }, (sent) => set({ sent, size: file.size })).then(
      () => refresh().then(() => set(null)),
      (error: unknown) => set({ refused: `${file.name} was not taken as a new version: ${messageOf(error)}` }),
    );
  }

  return { replacing, replace };
}
