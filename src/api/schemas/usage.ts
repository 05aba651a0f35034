import { z } from '@hono/zod-openapi';
import { plainText } from './common.ts';

export const usageDay = (name: string, description: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'A date, YYYY-MM-DD')
    .refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`)), 'Not a date')
    .optional()
    .openapi({ param: { name, in: 'query' }, description, example: '2026-11-27' });

export const UsageGroupBy = z.enum(['user', 'key', 'collection', 'model']).openapi('UsageGroupBy');

export const UsageQuery = z.object({
  group_by: UsageGroupBy.default('model').openapi({
    param: { name: 'group_by', in: 'query' },
    description:
      'What each row of a day is: a user, an API key (null: a bearer token or a worker), a collection (null: the personal space), or a model.',
  }),
  since: usageDay('since', 'The first day (UTC), included; default 29 days before `until`.'),
  until: usageDay('until', 'The last day (UTC), included; default today.'),
  collection_id: plainText()
    .optional()
    .openapi({
      param: { name: 'collection_id', in: 'query' },
      description: 'One collection’s usage, by every participant: its owner (and an administrator) only.',
    }),
});

const Counts = {
  calls: z.number().int().openapi({ description: 'Model calls (an embedding batch, an answer, a rerank, a judge call).' }),
  input_tokens: z.number().int().openapi({ description: 'Tokens sent, as each provider reported them.' }),
  output_tokens: z.number().int().openapi({ description: 'Tokens generated (answers, image descriptions, judgments).' }),
  characters: z.number().int().openapi({ description: 'Characters embedded where the provider reported no token count.' }),
  documents: z.number().int().openapi({ description: 'Passages sent to the reranker.' }),
  cost_usd: z.number().nullable().openapi({
    description:
      'From the deployment’s price table (MODEL_PRICES, USD per million tokens); null without one, or when a model of the row has no price.',
  }),
};

export const UsageRowSchema = z
  .object({
    date: z.string().openapi({ example: '2026-11-27' }),
    group: z.string().nullable().openapi({
      description: 'The user id, key id, collection id or model name, as `group_by` says; null: no key, or the personal space.',
    }),
    ...Counts,
  })
  .openapi('UsageRow');

export const UsageSchema = z
  .object({
    since: z.string().openapi({ example: '2026-10-29' }),
    until: z.string().openapi({ example: '2026-11-27' }),
    group_by: UsageGroupBy,
    scope: z.enum(['own', 'collection', 'all']).openapi({
      description:
        '`own`: the caller’s usage; `collection`: everyone’s in `collection_id`; `all`: everyone’s (an administrator).',
    }),
    priced: z.boolean().openapi({ description: 'Whether the deployment has a price table (MODEL_PRICES).' }),
    daily_token_cap: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'Tokens a user may spend on questions per UTC day (DAILY_TOKENS_PER_USER); null: no cap.' }),
    rows: z
      .array(UsageRowSchema)
      .openapi({ description: 'Per day (oldest first), then group; days without usage are left out.' }),
    totals: z.object(Counts),
  })
  .openapi('Usage');

export type UsageView = z.infer<typeof UsageSchema>;
