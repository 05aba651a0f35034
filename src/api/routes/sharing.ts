import { z } from '@hono/zod-openapi';
import type { App } from '../context.ts';
import { CollectionParams, json, jsonBody } from '../schemas/common.ts';
import { collectionErrors } from '../schemas/error.ts';
import {
  CreateShareSchema,
  JoinResultSchema,
  MemberParams,
  ShareParams,
  ShareSchema,
  SharesListingSchema,
  ShareTokenParams,
} from '../schemas/sharing.ts';
import { taggedRoutes } from './define-route.ts';

const route = taggedRoutes('Sharing', { errors: collectionErrors });

const createShare = route.post('/collections/{id}/shares', 'Create an invite link (owner only)', {
  operationId: 'createShare',
  access: 'bearer',
  description:
    'Returns the share with its `share_token`, the only time the token is shown: the service stores only its ' +
    'SHA-256 and its first 6 characters (`token_prefix`). Optional `expires_at` (an ISO 8601 time in the future, ' +
    'else 422) ends the link at that time; optional `max_uses` (1–1,000,000) caps how many users may join ' +
    'through it. Both default to null: no expiry, no limit.',
  request: { params: CollectionParams, body: jsonBody(CreateShareSchema) },
  responses: { 200: json(ShareSchema, 'The share, with its token') },
});

const listShares = route.get('/collections/{id}/shares', 'List invite links and members (owner only)', {
  operationId: 'listShares',
  access: 'bearer',
  description:
    'Each link comes with `share_token: null` (its token cannot be shown again), `token_prefix` to tell links ' +
    'apart, and `expires_at`, `max_uses` and `uses`. Expired and used-up links stay listed until revoked.',
  request: { params: CollectionParams },
  responses: { 200: json(SharesListingSchema, 'Links and members, oldest first') },
});

const revokeShare = route.delete('/collections/{id}/shares/{share_id}', 'Revoke an invite link (owner only)', {
  operationId: 'revokeShare',
  access: 'bearer',
  description: 'The link stops working. Members who joined through it stay members.',
  request: { params: ShareParams },
  responses: { 200: json(z.object({ deleted: z.string() }), 'The revoked share id') },
});

const removeMember = route.delete('/collections/{id}/members/{member_id}', 'Remove a member (owner only)', {
  operationId: 'removeMember',
  access: 'bearer',
  description:
    'Also deletes that member’s chat sessions in this collection. No link created before the removal lets them ' +
    'back in (403); to invite them again, create a new link.',
  request: { params: MemberParams },
  responses: { 200: json(z.object({ removed: z.string() }), 'The removed user id') },
});

const join = route.post('/collections/join/{share_token}', 'Join a collection through an invite link', {
  operationId: 'joinCollection',
  access: 'bearer',
  description:
    'Returns `{collection, permission}` on joining, `{already_owner: true}` for the owner, or ' +
    '`{already_member: true, permission}` with the permission the member already holds (a second link does not change it; ' +
    'neither this nor the owner’s answer uses up a use). ' +
    'A revoked or unknown token is 404, and so is an expired link ("Share link expired") or one that has reached ' +
    'its `max_uses` (the contract has no 410). A user removed from the collection is refused with 403 by every link ' +
    'created before the removal, and may join again only through a link the owner creates afterwards.',
  request: { params: ShareTokenParams },
  responses: { 200: json(JoinResultSchema, 'The join result') },
  errors: [403, 404],
});

export function registerSharingRoutes(app: App) {
  app.openapi(createShare, async (c) => {
    const share = await c.var.services.sharing.createShare(c.var.caller, c.req.valid('param').id, c.req.valid('json'));
    return c.json(share, 200);
  });
  app.openapi(listShares, async (c) => c.json(await c.var.services.sharing.list(c.var.caller, c.req.valid('param').id), 200));
  app.openapi(revokeShare, async (c) => {
    const { id, share_id } = c.req.valid('param');
    return c.json({ deleted: await c.var.services.sharing.revoke(c.var.caller, id, share_id) }, 200);
  });
  app.openapi(removeMember, async (c) => {
    const { id, member_id } = c.req.valid('param');
    return c.json({ removed: await c.var.services.sharing.removeMember(c.var.caller, id, member_id) }, 200);
  });
  app.openapi(join, async (c) => c.json(await c.var.services.sharing.join(c.var.caller, c.req.valid('param').share_token), 200));
}
