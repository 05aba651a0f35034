import type { Caller } from '#core/caller.ts';
import { isUuid } from '#core/db/client.ts';
import { forbidden, invalid, notFound } from '#core/errors.ts';
import { storedSource } from '#retrieval/retrieval.ts';
import type { ServiceDeps } from './deps.ts';

const sessionNotFound = () => notFound('Session');

/** Sessions are per user: another user's session is not_found, exactly like a missing one. */
export function createChatService(deps: Pick<ServiceDeps, 'access' | 'sessions' | 'members'>) {
  const { access, sessions, members } = deps;

  async function ownedSession(caller: Caller, collectionId: string, sessionId: string) {
    await access.requireParticipant(caller, collectionId);
    const session = isUuid(sessionId) ? await sessions.findOwned(collectionId, sessionId, caller.id) : undefined;
    if (!session) throw sessionNotFound();
    return session;
  }

  return {
    async create(caller: Caller, collectionId: string, title: string | null) {
      await access.requireParticipant(caller, collectionId);
      const session = await sessions.insertIfParticipant(collectionId, caller.id, title);
      // The collection or the membership went away between the check and the insert.
      if (!session) throw forbidden('You do not have access to this collection');
      return session;
    },

    async list(caller: Caller, collectionId: string) {
      await access.requireParticipant(caller, collectionId);
      return sessions.listOwned(collectionId, caller.id);
    },

    async messages(caller: Caller, collectionId: string, sessionId: string) {
      const session = await ownedSession(caller, collectionId, sessionId);
      const rows = await sessions.messages(session.id);
      return rows.map((row) => ({ ...row, sources: row.sources.map(storedSource) }));
    },

    async rename(caller: Caller, collectionId: string, sessionId: string, title: string) {
      const session = await ownedSession(caller, collectionId, sessionId);
      if (!(await sessions.rename(collectionId, session.id, caller.id, title))) throw sessionNotFound();
      return { updated: session.id, title };
    },

    async delete(caller: Caller, collectionId: string, sessionId: string) {
      const session = await ownedSession(caller, collectionId, sessionId);
      if (!(await sessions.delete(collectionId, session.id, caller.id))) throw sessionNotFound();
      return session.id;
    },

    /** Everyone else who may use the collection: its owner and its members. */
    async participants(caller: Caller, collectionId: string) {
      await access.requireParticipant(caller, collectionId);
      return (await members.participants(collectionId)).filter((p) => p.user_id !== caller.id);
    },

    async share(caller: Caller, collectionId: string, sessionId: string, targetUserId: string) {
      const session = await ownedSession(caller, collectionId, sessionId);
      const target = targetUserId.toLowerCase();
      if (target === caller.id) throw invalid('targetUserId', 'Cannot share a session with yourself');
      const participants = await members.participants(collectionId);
      if (!participants.some((p) => p.user_id === target)) {
        throw forbidden('The target user is not the owner or a member of this collection');
      }
      // The copy carries every passage the session's answers cited, from every collection it searched.
      if (!(await mayUseAll(members, target, session.collection_ids.slice(1)))) {
        throw forbidden('The target user is not the owner or a member of every collection this session searched');
      }
      const copyId = await sessions.copy(session.id, target);
      if (!copyId) throw sessionNotFound();
      return { shared: true as const, new_session_id: copyId };
    },
  };
}

/** Whether the user is the owner or a member of each of the collections (a deleted one counts as no). */
async function mayUseAll(members: ServiceDeps['members'], userId: string, collectionIds: readonly string[]): Promise<boolean> {
  const lists = await Promise.all(collectionIds.map((id) => members.participants(id)));
  return lists.every((participants) => participants.some((p) => p.user_id === userId));
}

export type ChatService = ReturnType<typeof createChatService>;
