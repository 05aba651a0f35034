import { z } from '@hono/zod-openapi';
import type { App } from '../context.ts';
import {
  CreateSessionSchema,
  MessageSchema,
  ParticipantSchema,
  RenameSessionSchema,
  SessionParams,
  SessionSchema,
  ShareSessionSchema,
} from '../schemas/chat.ts';
import { ChatCollectionParams, json, jsonBody } from '../schemas/common.ts';
import { collectionErrors } from '../schemas/error.ts';
import { taggedRoutes } from './define-route.ts';

const route = taggedRoutes('Chat', { errors: collectionErrors });
const params = ChatCollectionParams;

const create = route.post('/chat/{collection_id}/sessions', 'Start a chat session', {
  operationId: 'createSession',
  access: 'query',
  description: 'The body is optional: `{title}` of 1–100 characters. Without one the title stays null.',
  request: { params, body: jsonBody(CreateSessionSchema, { required: false }) },
  responses: { 200: json(SessionSchema, 'The new session') },
});

const list = route.get('/chat/{collection_id}/sessions', 'List the caller’s sessions', {
  operationId: 'listSessions',
  access: 'query',
  description: 'Only the caller’s own sessions, most recently updated first.',
  request: { params },
  responses: { 200: json(z.array(SessionSchema), 'Sessions') },
});

const messages = route.get('/chat/{collection_id}/sessions/{session_id}', 'Read a session’s messages (session owner only)', {
  operationId: 'getSessionMessages',
  access: 'query',
  description: 'Oldest first. Another user’s session is 404.',
  request: { params: SessionParams },
  responses: { 200: json(z.array(MessageSchema), 'Messages') },
});

const rename = route.patch('/chat/{collection_id}/sessions/{session_id}', 'Rename a session (session owner only)', {
  operationId: 'renameSession',
  access: 'query',
  request: { params: SessionParams, body: jsonBody(RenameSessionSchema) },
  responses: {
    200: json(z.object({ updated: z.string().openapi({ description: 'The session id' }), title: z.string() }), 'Renamed'),
  },
});

const remove = route.delete(
  '/chat/{collection_id}/sessions/{session_id}',
  'Delete a session and its messages (session owner only)',
  {
    operationId: 'deleteSession',
    access: 'query',
    request: { params: SessionParams },
    responses: { 200: json(z.object({ deleted: z.string() }), 'The deleted session id') },
  },
);

const members = route.get('/chat/{collection_id}/members', 'List the collection’s other participants', {
  operationId: 'listChatMembers',
  access: 'bearer',
  description: 'The owner and every member except the caller, owner first, with `role` `owner` or `member`.',
  request: { params },
  responses: { 200: json(z.array(ParticipantSchema), 'Participants') },
});

const share = route.post('/chat/{collection_id}/sessions/{session_id}/share', 'Copy a session to another participant', {
  operationId: 'shareSession',
  access: 'bearer',
  description:
    'Copies the session, with its messages and sources, to the target, who owns the copy. ' +
    'The target must be the owner or a member of the collection (403 otherwise); sharing with yourself is 422.',
  request: { params: SessionParams, body: jsonBody(ShareSessionSchema) },
  responses: { 200: json(z.object({ shared: z.literal(true), new_session_id: z.string() }), 'The copy’s id') },
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
