import { z } from '@hono/zod-openapi';
import { CollectionSchema } from './collections.ts';
import { CollectionParams, Id, Permission, pathParam, Timestamp } from './common.ts';

export const ShareSchema = z
  .object({
    id: Id.openapi({ description: 'Used as `{share_id}` to revoke the link' }),
    collection_id: Id,
    share_token: z
      .string()
      .openapi({ description: '256 random bits, base64url; joins with POST /collections/join/{share_token}' }),
    permission: Permission,
    created_at: Timestamp,
  })
  .openapi('Share');

export const MemberSchema = z
  .object({ user_id: Id, email: z.string().nullable(), permission: Permission, created_at: Timestamp })
  .openapi('Member');

export const CreateShareSchema = z.object({ permission: Permission }).openapi('CreateShare');

export const SharesListingSchema = z
  .object({ shares: z.array(ShareSchema), members: z.array(MemberSchema) })
  .openapi('SharesListing');

export const JoinResultSchema = z
  .union([
    z.object({ collection: CollectionSchema, permission: Permission }),
    z.object({ already_owner: z.literal(true) }),
    z.object({ already_member: z.literal(true), permission: Permission }),
  ])
  .openapi('JoinResult');

export const ShareParams = CollectionParams.extend({ share_id: pathParam('share_id', 'Share id') });
export const MemberParams = CollectionParams.extend({ member_id: pathParam('member_id', 'The member’s user id') });
export const ShareTokenParams = z.object({ share_token: pathParam('share_token', 'The invite link token') });
