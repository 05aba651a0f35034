import { Receiver } from '@upstash/qstash';
import type { MiddlewareHandler } from 'hono';
import type { z } from 'zod';

export interface DeliverySettings {
  /** This worker's public URL: signatures are checked against it plus the request's path. */
  workerUrl: string;
  currentSigningKey: string;
  nextSigningKey: string;
}

/**
 * For every POST: a valid QStash signature for this URL and this exact body, else 401 with
 * nothing done. The verified body is left in `c.var.body`, and `setup` runs with it.
 */
export function verifyDeliveries<E extends { Bindings: object; Variables: { body: string } }>(
  settings: (env: E['Bindings']) => DeliverySettings,
  setup?: (c: Parameters<MiddlewareHandler<E>>[0]) => void,
): MiddlewareHandler<E> {
  return async (c, next) => {
    if (c.req.method !== 'POST') return next();
    const { workerUrl, currentSigningKey, nextSigningKey } = settings(c.env);
    const body = await c.req.text();
    const receiver = new Receiver({ currentSigningKey, nextSigningKey });
    const signature = c.req.header('upstash-signature');
    const url = `${workerUrl.replace(/\/+$/, '')}${new URL(c.req.url).pathname}`;
    const valid = signature ? await receiver.verify({ signature, body, url }).catch(() => false) : false;
    if (!valid) return c.json({ detail: 'Invalid or missing QStash signature' }, 401);
    c.set('body', body);
    setup?.(c);
    return next();
  };
}

/** A message body, or undefined when it is not JSON of that shape. */
export function parseMessage<T>(schema: z.ZodType<T>, text: string): T | undefined {
  try {
    const result = schema.safeParse(JSON.parse(text));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}

/** QStash's failure callback carries the original message base64-encoded. */
export function decodeSourceBody(value: string): string {
  try {
    return new TextDecoder().decode(Uint8Array.from(atob(value), (ch) => ch.charCodeAt(0)));
  } catch {
    return '';
  }
}
