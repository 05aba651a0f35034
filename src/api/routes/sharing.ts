import { createRoute, z } from '@hono/zod-openapi';
import type { App } from '../context.ts';
import { CollectionParams, json, pathParam } from '../schemas/common.ts';
import { authErrors, errorResponses } from '../schemas/error.ts';
import { CreateShareSchema, JoinResultSchema, ShareSchema, SharesListingSchema } from '../schemas/sharing.ts';

const tags = ['Sharing'];
const params = CollectionParams;

const createShare = createRoute({
  method: 'post',
  path: '/collections/{id}/shares',
  tags,
  summary: 'Create an invite link (owner only)',
  request: { params, body: { required: true, content: { 'application/json': { schema: CreateShareSchema } } } },
  responses: { 200: json(ShareSchema, 'The share, with its token'), ...errorResponses(...authErrors, 403, 404) },
});

const listShares = createRoute({
  method: 'get',
  path: '/collections/{id}/shares',
  tags,
  summary: 'List invite links and members (owner only)',
  request: { params },
  responses: { 200: json(SharesListingSchema, 'Links and members, oldest first'), ...errorResponses(...authErrors, 403, 404) },
});

const revokeShare = createRoute({
  method: 'delete',
  path: '/collections/{id}/shares/{share_id}',
  tags,
  summary: 'Revoke an invite link (owner only)',
  description: 'The link stops working. Members who joined through it stay members.',
  request: { params: params.extend({ share_id: pathParam('share_id', 'Share id') }) },
  responses: {
    200: json(z.object({ deleted: z.string() }), 'The revoked share id'),
    ...errorResponses(...authErrors, 403, 404),
  },
});

const removeMember = createRoute({
  method: 'delete',
  path: '/collections/{id}/members/{member_id}',
  tags,
  summary: 'Remove a member (owner only)',
  description: 'Also deletes that member’s chat sessions in this collection.',
  request: { params: params.extend({ member_id: pathParam('member_id', 'The member’s user id') }) },
  responses: {
    200: json(z.object({ removed: z.string() }), 'The removed user id'),
    ...errorResponses(...authErrors, 403, 404),
  },
});

const join = createRoute({
  method: 'post',
  path: '/collections/join/{share_token}',
  tags,
  summary: 'Join a collection through an invite link',
  description:
    'Returns `{collection, permission}` on joining, `{already_owner: true}` for the owner, or ' +
    '`{already_member: true, permission}` with the permission the member already holds (a second link does not change it). ' +
    'A revoked or unknown token is 404.',
  request: { params: z.object({ share_token: pathParam('share_token', 'The invite link token') }) },
  responses: { 200: json(JoinResultSchema, 'The join result'), ...errorResponses(...authErrors, 404) },
});

export function registerSharingRoutes(app: App) {
  app.openapi(createShare, async (c) => {
    const share = await c.var.services.sharing.createShare(c.var.caller, c.req.valid('param').id, c.req.valid('json').permission);
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
