import { z } from '@hono/zod-openapi';
import { ChatCollectionParams, Id, Permission, pathParam, Timestamp, text } from './common.ts';

const Title = text({ min: 1, max: 100 });

export const SessionSchema = z
  .object({
    id: Id,
    title: z.string().nullable().openapi({ description: 'Null until set, or until the first question names it' }),
    collection_ids: z.array(Id).openapi({
      description:
        'The collections the session’s questions searched: the one it lives in first (the path’s), then each other ' +
        'one in the order a question first named it (`collection_ids` on `POST /query/`).',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('ChatSession');

export const CreateSessionSchema = z.object({ title: Title.optional() }).strict().openapi('CreateChatSession');
export const RenameSessionSchema = z.object({ title: Title }).strict().openapi('RenameChatSession');

export const SourceSchema = z
  .object({
    source: z.string(),
    chunk_index: z.number().int(),
    text: z.string(),
    score: z.number(),
    chunk_type: z.enum(['text', 'image_description']),
    image_url: z.string().nullable(),
    document_id: z
      .string()
      .nullable()
      .openapi({ description: 'The document the passage comes from; null in answers recorded before this field existed.' }),
    collection_id: z
      .string()
      .nullable()
      .openapi({
        description:
          'The collection the passage was found in (one of the question’s `collection_ids`); null for the personal space, ' +
          'and in answers recorded before this field existed.',
      }),
    page: z.union([z.number().int(), z.string()]).nullable().openapi({
      description:
        'Where in the document: the PDF page or slide number (from 1), or the sheet name of a spreadsheet; null where unknown (text, Markdown, web pages, or vectors written before it was recorded).',
      example: 4,
    }),
    heading: z.string().nullable().openapi({
      description:
        'The heading path in effect where the passage starts, outermost first, joined with " > "; null where the document has none.',
      example: 'Results > Adverse events',
    }),
    rerank_score: z
      .number()
      .nullable()
      .openapi({
        description:
          'The reranker’s relevance score, 0–1, when the passage was reranked (see `rerank`); null otherwise, and in ' +
          'answers recorded before this field existed. `score` stays the index’s fused score.',
      }),
  })
  .openapi('Source');

export const CitationCheckSchema = z
  .object({
    source: z.number().int().openapi({ description: 'The n of [n]: the n-th source of the answer (from 1)', example: 2 }),
    sentence: z.string().openapi({ description: 'The sentence that cites it, without its markers' }),
    supported: z.boolean().openapi({ description: 'Whether source n states or directly implies the sentence' }),
  })
  .openapi('CitationCheck');

export const MessageSchema = z
  .object({
    id: Id,
    role: z.enum(['user', 'assistant']),
    content: z.string(),
    sources: z.array(SourceSchema),
    citations: z
      .array(CitationCheckSchema)
      .nullable()
      .openapi({
        description:
          'An answer’s citations, checked once the answer is scored: each [n] and whether source n supports the sentence ' +
          'citing it. Null for questions, and for an answer not scored yet.',
      }),
    collection_ids: z.array(Id).openapi({
      description:
        'The collections this exchange (the question and its answer) searched; the session’s own for exchanges ' +
        'recorded before questions could search several.',
    }),
    created_at: Timestamp,
    evaluation_id: Id.nullable().openapi({
      description:
        'An answer’s evaluation record, to rate it (`PUT /query/answers/{evaluation_id}/feedback`); null for questions ' +
        'and in a shared copy of a session',
    }),
    feedback: z.enum(['up', 'down']).nullable().openapi({ description: 'The asker’s rating of the answer; null when not rated' }),
  })
  .openapi('ChatMessage');

export const ParticipantSchema = z
  .object({
    user_id: Id,
    email: z.string().nullable(),
    role: z.enum(['owner', 'member']),
    permission: Permission.nullable().openapi({ description: 'A member’s permission; null for the owner' }),
  })
  .openapi('ChatMember');

export const ShareSessionSchema = z
  .object({
    target_user_id: z.uuid().openapi({
      description: 'The owner or a member of the collection, and of every other collection the session searched',
    }),
  })
  .strict()
  .openapi('ShareChatSession');

export const SessionParams = ChatCollectionParams.extend({ session_id: pathParam('session_id', 'Chat session id') });
