import { useQuery } from '@tanstack/preact-query';
import { lastDays } from '../usage/format.ts';
import { adminKey, listUsers } from './api.ts';

/**
 * Users' emails by id, for an administrator to read who acted or spent: the 200 (the most a page holds) who spent the
 * most this month, which is everyone on most deployments; anyone else is named by the start of their id.
 */
export function useEmails(enabled = true): ReadonlyMap<string, string> {
  const users = useQuery({
    queryKey: [...adminKey, 'emails'],
    queryFn: () => listUsers(lastDays(30), 0, 200),
    staleTime: 60_000,
    enabled,
  });
  return new Map((users.data ?? []).flatMap((user) => (user.email ? [[user.id, user.email] as const] : [])));
}
