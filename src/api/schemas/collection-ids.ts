import { z } from '@hono/zod-openapi';
import { MAX_QUERY_COLLECTIONS } from '#core/limits.ts';
import { plainText } from './common.ts';

/** `collection_ids` of a search or a question: several collections searched at once, instead of `collection_id`. */
export const CollectionIds = z
  .array(plainText({ min: 1 }))
  .min(1)
  .max(MAX_QUERY_COLLECTIONS)
  .nullish()
  .openapi({
    description: `Several collections to search at once, 1–${MAX_QUERY_COLLECTIONS}, each named once, instead of \`collection_id\`
(both: 422). The caller must be the owner or a member of every one (404 for one that does not exist, 403 for one
they may not use, the first refused in the order given deciding), and an API key restricted to a collection reaches
only that one. Every collection's namespace is searched at once; their dense lists are merged by score, their sparse
lists likewise, and the two are fused once, so passages of all of them compete on one scale. The collections'
\`retrieval_strategy\` applies when they all have the same, else \`similarity\`. Each source says its
\`collection_id\`. The personal space cannot be one of them. Omitted or null: \`collection_id\` decides.`,
    example: ['3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f', '7a2b3c4d-1e2f-4a5b-9c8d-7e6f5a4b3c2d'],
  });

/** Refuses `collection_id` and `collection_ids` together, and a collection named twice. */
export function oneScope(body: { collection_id?: string | null; collection_ids?: string[] | null }, ctx: z.RefinementCtx) {
  const ids = body.collection_ids;
  if (!ids) return;
  if (body.collection_id) {
    ctx.addIssue({
      code: 'custom',
      path: ['collection_ids'],
      message: 'Give collection_id or collection_ids, not both',
    });
  }
  const seen = new Set<string>();
  ids.forEach((id, index) => {
    if (seen.has(id.toLowerCase())) {
      ctx.addIssue({ code: 'custom', path: ['collection_ids', index], message: 'This collection is named already' });
    }
    seen.add(id.toLowerCase());
  });
}

/** The collections a valid body asks for, in its order: none for the personal space. */
export const askedCollections = (body: { collection_id?: string | null; collection_ids?: string[] | null }): string[] =>
  body.collection_ids ?? (body.collection_id ? [body.collection_id] : []);
