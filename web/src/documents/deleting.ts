import { messageOf } from '../api.ts';
import type { Doc } from './api.ts';
import { plural } from './format.ts';

/**
 * Deletes each document on its own, so that one refusal stops none of the others; answers which went and what to
 * tell the reader: a notice, and the refusals by name.
 */
export async function deleteDocuments(targets: Doc[], remove: (id: string) => Promise<unknown>) {
  const results = await Promise.allSettled(targets.map((doc) => remove(doc.id)));
  const failed = targets.flatMap((doc, i) => {
    const result = results[i];
    return result?.status === 'rejected' ? [`${doc.name} (${messageOf(result.reason)})`] : [];
  });
  const deletedIds = targets.filter((_, i) => results[i]?.status === 'fulfilled').map((doc) => doc.id);
  const deleted = targets.length - failed.length;
  if (failed.length === 0)
    return { deletedIds, notice: `Deleted ${deleted === 1 ? targets[0]?.name : plural(deleted, 'document')}.`, problem: '' };
  return {
    deletedIds,
    notice: `Deleted ${deleted} of ${plural(targets.length, 'document')}.`,
    problem: `Not deleted: ${failed.join('; ')}.`,
  };
}
