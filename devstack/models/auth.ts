import type { MiddlewareHandler } from 'hono';
import { OpenAIError } from './errors.ts';

// Comparing every byte whatever the input keeps the key from leaking through response timing.
function sameKey(given: string, expected: string): boolean {
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(expected);
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/** OpenAI's bearer check and its two 401 bodies: no key, or a wrong one. */
export function bearerAuth(apiKey: string): MiddlewareHandler {
  return async (c, next) => {
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      const error = new OpenAIError(
        401,
        'invalid_request_error',
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
      );
      return c.json(error.body(), 401);
    }
    if (!sameKey(match[1] as string, apiKey)) {
      const error = new OpenAIError(401, 'invalid_request_error', 'Incorrect API key provided.', 'invalid_api_key');
      return c.json(error.body(), 401);
    }
    await next();
  };
}
