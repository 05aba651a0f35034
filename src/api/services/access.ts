import { isUuid } from '#core/db/client.ts';
import type { CollectionRepo, CollectionRow } from '#core/db/collections.ts';
import type { Permission } from '#core/db/shares.ts';
import { forbidden, notFound } from '#core/errors.ts';
import type { Caller } from '../auth/caller.ts';

export interface CollectionAccess {
  collection: CollectionRow;
  role: 'owner' | 'member';
  /** The member's permission; the owner may do everything. */
  permission: Permission | null;
}

/**
 * The collection access rules in one place: a collection that does not exist is
 * not_found for everyone; one that exists but is not the caller's to use is forbidden.
 */
export function createAccessService(collections: CollectionRepo) {
  async function load(caller: Caller, collectionId: string) {
    const row = isUuid(collectionId) ? await collections.findWithAccess(collectionId, caller.id) : undefined;
    if (!row) throw notFound('Collection');
    const { member_permission, ...collection } = row;
    return { collection, member_permission };
  }

  return {
    async requireOwner(caller: Caller, collectionId: string): Promise<CollectionRow> {
      const { collection } = await load(caller, collectionId);
      if (collection.user_id !== caller.id) throw forbidden('Only the collection owner can do this');
      return collection;
    },

    async requireParticipant(caller: Caller, collectionId: string): Promise<CollectionAccess> {
      const { collection, member_permission } = await load(caller, collectionId);
      if (collection.user_id === caller.id) return { collection, role: 'owner', permission: null };
      if (member_permission) return { collection, role: 'member', permission: member_permission };
      throw forbidden('You do not have access to this collection');
    },

    async requireAdmin(caller: Caller, collectionId: string): Promise<CollectionRow> {
      const { collection } = await load(caller, collectionId);
      if (!caller.isAdmin) throw forbidden('Only an administrator can do this');
      return collection;
    },
  };
}

export type AccessService = ReturnType<typeof createAccessService>;
