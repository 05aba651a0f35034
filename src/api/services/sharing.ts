import type { Caller } from '#core/caller.ts';
import { isUuid } from '#core/db/client.ts';
import type { CollectionRow } from '#core/db/collections.ts';
import type { JoinOutcome } from '#core/db/members.ts';
import type { Permission, ShareRow } from '#core/db/shares.ts';
import { DomainError, forbidden, invalid, notFound } from '#core/errors.ts';
import type { ServiceDeps } from './deps.ts';
import { hashShareToken, newShareToken, TOKEN_PREFIX_LENGTH } from './share-tokens.ts';

export type JoinResult =
  | { collection: CollectionRow; permission: Permission }
  | { already_owner: true }
  | { already_member: true; permission: Permission };

export interface ShareOptions {
  permission: Permission;
  /** ISO 8601; must lie in the future. */
  expires_at?: string | null;
  max_uses?: number | null;
}

/** The token is shown once, when the link is made; listings show null, as only its hash is kept. */
export type CreatedShare = ShareRow & { share_token: string };
export type ListedShare = ShareRow & { share_token: null };

/** What each refused join tells the caller. Expired and used-up links are 404: the contract has no 410. */
const REFUSALS: Record<Exclude<JoinOutcome['outcome'], 'joined' | 'already_member'>, () => DomainError> = {
  removed: () =>
    forbidden('You were removed from this collection; this link no longer admits you. Ask the owner for a new link.'),
  expired: () => new DomainError('not_found', 'Share link expired'),
  used_up: () => new DomainError('not_found', 'Share link has reached its maximum number of uses'),
  gone: () => notFound('Share link'),
};

export function createSharingService(deps: Pick<ServiceDeps, 'access' | 'collections' | 'shares' | 'members' | 'audit'>) {
  const { access, collections, shares, members, audit } = deps;
  return {
    async createShare(caller: Caller, collectionId: string, options: ShareOptions): Promise<CreatedShare> {
      await access.requireOwner(caller, collectionId);
      const expiresAt = options.expires_at ?? null;
      if (expiresAt !== null && Date.parse(expiresAt) <= Date.now()) {
        throw invalid('expires_at', 'expires_at must be in the future');
      }
      const token = newShareToken();
      const row = await shares.insert(collectionId, caller.id, {
        permission: options.permission,
        tokenHash: await hashShareToken(token),
        tokenPrefix: token.slice(0, TOKEN_PREFIX_LENGTH),
        expiresAt,
        maxUses: options.max_uses ?? null,
      });
      // The token is never logged, nor its prefix: the share's id names it.
      await audit(
        caller,
        'share.created',
        { type: 'share', id: row.id, collectionId: row.collection_id },
        { permission: row.permission, expires_at: row.expires_at, max_uses: row.max_uses },
      );
      return { ...row, share_token: token };
    },

    async list(caller: Caller, collectionId: string) {
      await access.requireOwner(caller, collectionId);
      const [shareRows, memberRows] = await Promise.all([shares.list(collectionId), members.list(collectionId)]);
      const listed: ListedShare[] = shareRows.map((row) => ({ ...row, share_token: null }));
      return { shares: listed, members: memberRows };
    },

    async revoke(caller: Caller, collectionId: string, shareId: string): Promise<string> {
      await access.requireOwner(caller, collectionId);
      if (!isUuid(shareId) || !(await shares.delete(collectionId, shareId))) throw notFound('Share');
      await audit(caller, 'share.revoked', {
        type: 'share',
        id: shareId.toLowerCase(),
        collectionId: collectionId.toLowerCase(),
      });
      return shareId;
    },

    async removeMember(caller: Caller, collectionId: string, memberId: string): Promise<string> {
      await access.requireOwner(caller, collectionId);
      if (!isUuid(memberId) || !(await members.remove(collectionId, memberId.toLowerCase()))) throw notFound('Member');
      await audit(caller, 'member.removed', {
        type: 'user',
        id: memberId.toLowerCase(),
        collectionId: collectionId.toLowerCase(),
      });
      return memberId;
    },

    async join(caller: Caller, token: string): Promise<JoinResult> {
      const share = await shares.findByHash(await hashShareToken(token));
      if (!share) throw notFound('Share link');
      const found = await collections.findWithAccess(share.collection_id, caller.id);
      if (!found) throw notFound('Share link');
      const { member_permission, ...collection } = found;
      if (collection.user_id === caller.id) return { already_owner: true };
      // A member uses up nothing and is told what they hold, whatever the link's state.
      if (member_permission) return { already_member: true, permission: member_permission };
      const joined = await members.join(collection.id, share.id, caller.id);
      if (joined.outcome === 'joined') {
        await audit(
          caller,
          'share.joined',
          { type: 'share', id: share.id, collectionId: collection.id },
          { permission: joined.permission },
        );
        return { collection, permission: joined.permission };
      }
      if (joined.outcome === 'already_member') return { already_member: true, permission: joined.permission };
      throw REFUSALS[joined.outcome]();
    },
  };
}

export type SharingService = ReturnType<typeof createSharingService>;
