import { z } from '@hono/zod-openapi';

const Latency = z.number().int().min(0).openapi({ description: 'How long the check took, in milliseconds.' });

const CheckSchema = z
  .object({
    status: z.enum(['ok', 'failing', 'skipped']),
    latency_ms: Latency,
    reason: z
      .enum([
        'timeout',
        'unreachable',
        'unauthorized',
        'not_found',
        'unavailable',
        'invalid',
        'misconfigured',
        'not_configured',
        'config_failing',
      ])
      .optional()
      .openapi({
        description:
          'Why it failed or was skipped, in the service’s words (never an upstream’s): `timeout` (no answer within 2 s), ' +
          '`unreachable` (no connection), `unauthorized` (our credentials were refused), `not_found` (the provider does ' +
          'not know the model), `unavailable` (another error status), `invalid` (not the answer that service gives), ' +
          '`misconfigured` (the settings named in `settings` did not validate); skipped: `not_configured` (optional and ' +
          'not set) or `config_failing` (not checked while the settings are broken).',
      }),
    http_status: z.number().int().optional().openapi({ description: 'The status the dependency answered, when it answered.' }),
    settings: z
      .array(z.string())
      .optional()
      .openapi({ description: 'The settings that did not validate (names, never values).' }),
    dead_letters: z
      .number()
      .int()
      .min(0)
      .optional()
      .openapi({ description: 'QStash only: messages in its dead-letter queue (at most 1,000 are counted).' }),
    dead_letters_more: z.boolean().optional().openapi({ description: 'QStash only: true when there are more than counted.' }),
  })
  .openapi('ReadinessCheck');

export const ReadinessSchema = z
  .object({
    status: z.enum(['ready', 'failing']),
    checks: z.object({
      config: CheckSchema,
      database: CheckSchema,
      jwks: CheckSchema,
      qstash: CheckSchema,
      vector: CheckSchema,
      redis: CheckSchema,
      chat: CheckSchema,
      embeddings: CheckSchema,
    }),
    failing: z
      .array(z.enum(['config', 'database', 'jwks', 'qstash', 'vector', 'redis', 'chat', 'embeddings']))
      .openapi({ description: 'The failing checks by name; empty when ready.' }),
  })
  .openapi('Readiness');
