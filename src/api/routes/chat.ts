import { createRoute, z } from '@hono/zod-openapi';
import type { App } from '../context.ts';
import {
  CreateSessionSchema,
  MessageSchema,
  ParticipantSchema,
  RenameSessionSchema,
  SessionSchema,
  ShareSessionSchema,
} from '../schemas/chat.ts';
import { ChatCollectionParams, json, pathParam } from '../schemas/common.ts';
import { authErrors, errorResponses } from '../schemas/error.ts';

const tags = ['Chat'];
const params = ChatCollectionParams;
const sessionParams = params.extend({ session_id: pathParam('session_id', 'Chat session id') });
const errors = errorResponses(...authErrors, 403, 404);

const create = createRoute({
  method: 'post',
  path: '/chat/{collection_id}/sessions',
  tags,
  summary: 'Start a chat session',
  description: 'The body is optional: `{title}` of 1–100 characters. Without one the title stays null.',
  request: { params, body: { required: false, content: { 'application/json': { schema: CreateSessionSchema } } } },
  responses: { 200: json(SessionSchema, 'The new session'), ...errors },
});

const list = createRoute({
  method: 'get',
  path: '/chat/{collection_id}/sessions',
  tags,
  summary: 'List the caller’s sessions',
  description: 'Only the caller’s own sessions, most recently updated first.',
  request: { params },
  responses: { 200: json(z.array(SessionSchema), 'Sessions'), ...errors },
});

const messages = createRoute({
  method: 'get',
  path: '/chat/{collection_id}/sessions/{session_id}',
  tags,
  summary: 'Read a session’s messages (session owner only)',
  description: 'Oldest first. Another user’s session is 404.',
  request: { params: sessionParams },
  responses: { 200: json(z.array(MessageSchema), 'Messages'), ...errors },
});

const rename = createRoute({
  method: 'patch',
  path: '/chat/{collection_id}/sessions/{session_id}',
  tags,
  summary: 'Rename a session (session owner only)',
  request: { params: sessionParams, body: { required: true, content: { 'application/json': { schema: RenameSessionSchema } } } },
  responses: {
    200: json(z.object({ updated: z.string().openapi({ description: 'The session id' }), title: z.string() }), 'Renamed'),
    ...errors,
  },
});

const remove = createRoute({
  method: 'delete',
  path: '/chat/{collection_id}/sessions/{session_id}',
  tags,
  summary: 'Delete a session and its messages (session owner only)',
  request: { params: sessionParams },
  responses: { 200: json(z.object({ deleted: z.string() }), 'The deleted session id'), ...errors },
});

const members = createRoute({
  method: 'get',
  path: '/chat/{collection_id}/members',
  tags,
  summary: 'List the collection’s other participants',
  description: 'The owner and every member except the caller, owner first, with `role` `owner` or `member`.',
  request: { params },
  responses: { 200: json(z.array(ParticipantSchema), 'Participants'), ...errors },
});

const share = createRoute({
  method: 'post',
  path: '/chat/{collection_id}/sessions/{session_id}/share',
  tags,
  summary: 'Copy a session to another participant',
  description:
    'Copies the session, with its messages and sources, to the target, who owns the copy. ' +
    'The target must be the owner or a member of the collection (403 otherwise); sharing with yourself is 422.',
  request: { params: sessionParams, body: { required: true, content: { 'application/json': { schema: ShareSessionSchema } } } },
  responses: {
    200: json(z.object({ shared: z.literal(true), new_session_id: z.string() }), 'The copy’s id'),
    ...errors,
  },
});

export function registerChatRoutes(app: App) {
  app.openapi(create, async (c) => {
    const { title } = c.req.valid('json') ?? {};
    return c.json(await c.var.services.chat.create(c.var.caller, c.req.valid('param').collection_id, title ?? null), 200);
  });
  app.openapi(list, async (c) => c.json(await c.var.services.chat.list(c.var.caller, c.req.valid('param').collection_id), 200));
  app.openapi(messages, async (c) => {
    const { collection_id, session_id } = c.req.valid('param');
    const rows = await c.var.services.chat.messages(c.var.caller, collection_id, session_id);
    return c.json(rows as z.infer<typeof MessageSchema>[], 200);
  });
  app.openapi(rename, async (c) => {
    const { collection_id, session_id } = c.req.valid('param');
    return c.json(await c.var.services.chat.rename(c.var.caller, collection_id, session_id, c.req.valid('json').title), 200);
  });
  app.openapi(remove, async (c) => {
    const { collection_id, session_id } = c.req.valid('param');
    return c.json({ deleted: await c.var.services.chat.delete(c.var.caller, collection_id, session_id) }, 200);
  });
  app.openapi(members, async (c) =>
    c.json(await c.var.services.chat.participants(c.var.caller, c.req.valid('param').collection_id), 200),
  );
  app.openapi(share, async (c) => {
    const { collection_id, session_id } = c.req.valid('param');
    const result = await c.var.services.chat.share(c.var.caller, collection_id, session_id, c.req.valid('json').target_user_id);
    return c.json(result, 200);
  });
}
