import { z } from '@hono/zod-openapi';
import { MAX_SHARE_USES } from '#core/limits.ts';
import { CollectionSchema } from './collections.ts';
import { CollectionParams, Id, Permission, pathParam, Timestamp } from './common.ts';

const shareFields = {
  id: Id.openapi({ description: 'Used as `{share_id}` to revoke the link' }),
  collection_id: Id,
  token_prefix: z.string().openapi({
    description: 'The first 6 characters of the token, kept in clear so owners can tell links apart; not enough to join',
    example: 'q3Zr_x',
  }),
  permission: Permission,
  created_at: Timestamp,
  expires_at: Timestamp.nullable().openapi({ description: 'After this the link no longer admits anyone; null: never' }),
  max_uses: z.number().int().nullable().openapi({ description: 'How many users may join through the link; null: no limit' }),
  uses: z.number().int().openapi({ description: 'How many users have joined through the link' }),
};

export const ShareSchema = z
  .object({
    ...shareFields,
    share_token: z.string().openapi({
      description:
        '256 random bits, base64url; joins with POST /collections/join/{share_token}. ' +
        'Returned only here: the service keeps only its SHA-256, so store or send it now.',
    }),
  })
  .openapi('Share');

export const ListedShareSchema = z
  .object({
    ...shareFields,
    share_token: z.null().openapi({
      description: 'Always null: only the token’s hash is stored. Use `token_prefix` to tell links apart.',
    }),
  })
  .openapi('ListedShare');

export const MemberSchema = z
  .object({ user_id: Id, email: z.string().nullable(), permission: Permission, created_at: Timestamp })
  .openapi('Member');

export const CreateShareSchema = z
  .object({
    permission: Permission,
    expires_at: z.iso.datetime({ offset: true }).nullish().openapi({
      description: 'Optional: when the link stops admitting anyone, an ISO 8601 time in the future',
      example: '2026-12-31T23:59:59Z',
    }),
    max_uses: z
      .number()
      .int()
      .min(1)
      .max(MAX_SHARE_USES)
      .nullish()
      .openapi({ description: `Optional: how many users may join through the link, 1–${MAX_SHARE_USES}` }),
  })
  .openapi('CreateShare');

export const SharesListingSchema = z
  .object({ shares: z.array(ListedShareSchema), members: z.array(MemberSchema) })
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
