import type { Caller } from '#core/caller.ts';
import { isUuid } from '#core/db/client.ts';
import type { CollectionRepo, CollectionRow } from '#core/db/collections.ts';
import type { Permission } from '#core/db/shares.ts';
import { forbidden, notFound } from '#core/errors.ts';

export interface CollectionAccess {
  collection: CollectionRow;
  role: 'owner' | 'member';
  /** The member's permission; the owner may do everything. */
  permission: Permission | null;
}

const RESTRICTED = 'This API key is restricted to another collection';

/**
 * The collection access rules in one place: a collection that does not exist is
 * not_found for everyone; one that exists but is not the caller's to use is forbidden,
 * and so is one outside an API key's restriction.
 */
export function createAccessService(collections: CollectionRepo) {
  async function load(caller: Caller, collectionId: string, options?: { deleting?: boolean }) {
    const row = isUuid(collectionId) ? await collections.findWithAccess(collectionId, caller.id, options) : undefined;
    if (!row) throw notFound('Collection');
    if (!keyAllows(caller, row.id)) throw forbidden(RESTRICTED);
    const { member_permission, ...collection } = row;
    return { collection, member_permission };
  }

  return {
    /** The caller's personal namespace, or any other place outside every collection: not for a restricted key. */
    requireUnrestricted(caller: Caller): void {
      if (caller.key?.collectionId) throw forbidden(RESTRICTED);
    },

    /** Whether the caller's key (if any) may reach this collection; for listings, which leave out the rest. */
    keyAllows,

    /** Something asked over these collections (none: the personal space): a restricted key reaches its own one alone. */
    requireKeyReaches(caller: Caller, collectionIds: readonly string[]): void {
      if (caller.key?.collectionId && !(collectionIds.length === 1 && keyAllows(caller, collectionIds[0] as string))) {
        throw forbidden(RESTRICTED);
      }
    },

    /** `deleting`: a collection whose deletion began counts too (for everything else it is gone), so that a retry finishes it. */
    async requireOwner(caller: Caller, collectionId: string, options?: { deleting?: boolean }): Promise<CollectionRow> {
      const { collection } = await load(caller, collectionId, options);
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

function keyAllows(caller: Caller, collectionId: string | null): boolean {
  const restriction = caller.key?.collectionId;
  return !restriction || restriction === collectionId?.toLowerCase();
}
