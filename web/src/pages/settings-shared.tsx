// What the settings page's two sections share: the collections a key or a webhook may be limited to, and the confirmation.
import type { Schema } from '../api.ts';

type Listed = Schema<'ListedCollection'>;

/** A question asked before something is undone for good. */
export interface Confirmation {
  title: string;
  body: string;
  action: string;
  run: () => void;
}
export type Ask = (confirmation: Confirmation) => void;

/** The collections a key or a webhook may be limited to, as options; the first says what no choice means. */
export function CollectionOptions({ listed, none }: { listed: Listed[] | undefined; none: string }) {
  return (
    <>
      <option value="">{none}</option>
      {listed?.map((collection) => (
        <option key={collection.id} value={collection.id}>
          {collection.name}
          {collection.shared ? ' (shared with you)' : ''}
        </option>
      ))}
    </>
  );
}

/** What a key or a webhook is limited to, by the collection's name. */
export function collectionName(listed: Listed[] | undefined, id: string | null, none: string): string {
  if (!id) return none;
  return listed?.find((collection) => collection.id === id)?.name ?? 'a collection you can no longer see';
}
