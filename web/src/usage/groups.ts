import { useQuery } from '@tanstack/preact-query';
import { call, rag } from '../api.ts';
import { useCollections } from '../collections.ts';
import type { GroupBy } from './api.ts';
import { shortId } from './format.ts';

/** What a breakdown row's group is called, by `group_by`: the table's first column. */
export const GROUP_LABELS = {
  model: 'Model',
  collection: 'Collection',
  key: 'API key',
  user: 'User',
} satisfies Record<GroupBy, string>;

/**
 * A group's name in words: a model by its name, a collection or an API key of the caller's by its name, the
 * caller as "You", a user by email where the caller knows it (`emails`, an administrator's), anything else by
 * the start of its id.
 */
export function useGroupNames(groupBy: GroupBy, me: string | undefined, emails?: ReadonlyMap<string, string>) {
  const collections = useCollections();
  // GET /keys lists the caller's keys not revoked: a revoked key is named by its id.
  const keys = useQuery({ queryKey: ['keys'], queryFn: () => call(rag.GET('/keys')), enabled: groupBy === 'key' });
  return (group: string | null): string => {
    switch (groupBy) {
      case 'model':
        return group ?? 'Unknown model';
      case 'collection':
        if (group === null) return 'Personal space';
        return collections.data?.find((c) => c.id === group)?.name ?? `Collection ${shortId(group)}`;
      case 'key':
        if (group === null) return 'No key (the app, or a worker)';
        return keys.data?.find((k) => k.id === group)?.name ?? `Key ${shortId(group)}`;
      case 'user':
        if (group === null) return 'Unknown user';
        if (group === me) return 'You';
        return emails?.get(group) ?? `User ${shortId(group)}`;
    }
  };
}
