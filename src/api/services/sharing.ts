import { isUuid } from '#core/db/client.ts';
import type { CollectionRow } from '#core/db/collections.ts';
import type { Permission } from '#core/db/shares.ts';
import { notFound } from '#core/errors.ts';
import type { Caller } from '../auth/caller.ts';
import type { ServiceDeps } from './deps.ts';

export type JoinResult =
  | { collection: CollectionRow; permission: Permission }
  | { already_owner: true }
  | { already_member: true; permission: Permission };

/** 256 random bits, base64url: unguessable, and safe in a URL path. */
export function newShareToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

export function createSharingService(deps: Pick<ServiceDeps, 'access' | 'collections' | 'shares' | 'members'>) {
  const { access, collections, shares, members } = deps;
  return {
    async createShare(caller: Caller, collectionId: string, permission: Permission) {
      await access.requireOwner(caller, collectionId);
      return shares.insert(collectionId, caller.id, permission, newShareToken());
    },

    async list(caller: Caller, collectionId: string) {
      await access.requireOwner(caller, collectionId);
      const [shareRows, memberRows] = await Promise.all([shares.list(collectionId), members.list(collectionId)]);
      return { shares: shareRows, members: memberRows };
    },

    async revoke(caller: Caller, collectionId: string, shareId: string): Promise<string> {
      await access.requireOwner(caller, collectionId);
      if (!isUuid(shareId) || !(await shares.delete(collectionId, shareId))) throw notFound('Share');
      return shareId;
    },

    async removeMember(caller: Caller, collectionId: string, memberId: string): Promise<string> {
      await access.requireOwner(caller, collectionId);
      if (!isUuid(memberId) || !(await members.remove(collectionId, memberId.toLowerCase()))) throw notFound('Member');
      return memberId;
    },

    async join(caller: Caller, token: string): Promise<JoinResult> {
      const share = await shares.findByToken(token);
      if (!share) throw notFound('Share link');
      const access = await collections.findWithAccess(share.collection_id, caller.id);
      if (!access) throw notFound('Share link');
      const { member_permission: _, ...collection } = access;
      if (collection.user_id === caller.id) return { already_owner: true };
      const joined = await members.join(collection.id, caller.id, share.permission, share.id);
      return joined.inserted
        ? { collection, permission: joined.permission }
        : { already_member: true, permission: joined.permission };
    },
  };
}

export type SharingService = ReturnType<typeof createSharingService>;
