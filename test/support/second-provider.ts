import { type ServerType, serve } from '@hono/node-server';
import { Hono } from 'hono';
import { freePort } from '../../devstack/ports.ts';

/**
 * A second OpenAI-compatible server, not the devstack: it records every request and answers chat
 * completions by a fixed rule, so a test can tell which provider served which role. The rule: the
 * answer is "Second provider says: " followed by the first passage header's source name, then " [1]".
 * Embeddings and anything else are refused with 404, so a role sent here by mistake fails loudly.
 */
export interface RecordedRequest {
  path: string;
  authorization: string | null;
  body: any;
}

export interface SecondProvider {
  baseUrl: string;
  requests: RecordedRequest[];
  stop(): Promise<void>;
}

export const SECOND_PROVIDER_PREFIX = 'Second provider says: ';

export async function startSecondProvider(): Promise<SecondProvider> {
  const requests: RecordedRequest[] = [];
  const app = new Hono();
  app.use('*', async (c, next) => {
    const body = c.req.method === 'POST' ? await c.req.json().catch(() => null) : null;
    requests.push({ path: c.req.path, authorization: c.req.header('authorization') ?? null, body });
    await next();
  });
  app.post('/v1/chat/completions', () => {
    const body = requests.at(-1)?.body as { model: string; messages: { role: string; content: string }[] };
    const prompt = body.messages.findLast((m) => m.role === 'user')?.content ?? '';
    const source = /^\[1\] \(source: (.*?)(?:, page \d+)?\)$/m.exec(prompt)?.[1] ?? 'nothing';
    const text = `${SECOND_PROVIDER_PREFIX}${source} [1]`;
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const stream = [
      chunk({ role: 'assistant', content: '' }),
      ...text.split(/(?<= )/).map((piece) => chunk({ content: piece })),
      chunk({}, 'stop'),
      'data: [DONE]\n\n',
    ];
    return new Response(stream.join(''), { headers: { 'content-type': 'text/event-stream' } });
  });
  app.all('*', (c) => c.json({ error: { message: 'not served here' } }, 404));

  const port = await freePort();
  const server: ServerType = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' });
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
