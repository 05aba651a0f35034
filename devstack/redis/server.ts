import { timingSafeEqual } from 'node:crypto';
import { type Context, Hono } from 'hono';
import { CommandError, commandList, parseCommand } from './commands.ts';
import { connectRedis, isRedisError, type RedisConnection, RedisUnreachable } from './connection.ts';
import { type Outcome, outcomeJson, replyJson } from './replies.ts';
import { type Rewritten, ScriptIds } from './scripts.ts';

export interface RedisRestOptions {
  /** The REST token (UPSTASH_REDIS_REST_TOKEN). */
  token: string;
  /** The Redis server behind the front. */
  redisUrl: string;
  log?: (line: string) => void;
}

export interface RedisRest {
  /** Routes relative to the REST URL: mount with app.route('/redis', rest.app). */
  app: Hono;
  close(): Promise<void>;
}

/**
 * Upstash Redis's REST API in front of a real Redis, as Upstash's own local stand-in (SRH)
 * does: `POST /` with one command, `/pipeline`, `/multi-exec`, and the path form
 * `/set/key/value?EX=100`. Bearer token or `_token`; `{ result }` and `{ error }` bodies;
 * Redis's errors with HTTP 400, so that the client throws what it throws in production.
 */
export function createRedisServer(options: RedisRestOptions): RedisRest {
  const log = options.log ?? (() => {});
  const redis: RedisConnection = connectRedis(options.redisUrl, log);
  const scripts = new ScriptIds();
  const app = new Hono();

  app.use('*', async (c, next) => {
    if (!authorized(c, options.token)) return c.json({ error: 'Unauthorized' }, 401);
    return next();
  });

  app.post('/', (c) =>
    answer(c, async () => {
      const rewritten = scripts.rewrite(parseCommand(await body(c)));
      return { result: replyJson(await run(redis, rewritten), base64(c)) };
    }),
  );

  app.post('/pipeline', (c) =>
    answer(c, async () => {
      // A command that cannot be sent is that command's error; the others still run.
      const entries = commandList(await body(c)).map((value): Rewritten | { error: string } => {
        try {
          return scripts.rewrite(parseCommand(value));
        } catch (error) {
          if (error instanceof CommandError) return { error: error.message };
          throw error;
        }
      });
      const valid = entries.filter((entry): entry is Rewritten => 'args' in entry);
      const outcomes = await redis.pipeline(valid.map((entry) => entry.args));
      const answered = valid.map((entry, i) => withReply(entry, outcomes[i]!));
      return entries.map((entry) => outcomeJson('args' in entry ? answered.shift()! : entry, base64(c)));
    }),
  );

  app.post('/multi-exec', (c) =>
    answer(c, async () => {
      // One command that cannot be sent discards the transaction, as on Upstash.
      const commands = commandList(await body(c)).map((value) => scripts.rewrite(parseCommand(value)));
      const outcomes = await redis.transaction(commands.map((entry) => entry.args));
      return commands.map((entry, i) => outcomeJson(withReply(entry, outcomes[i]!), base64(c)));
    }),
  );

  // `/set/key/value`: Upstash takes the command from the path; a POST body is one more
  // argument, and query parameters (`?EX=100`) come last, as names and values.
  app.on(['GET', 'HEAD', 'POST', 'PUT'], '/:command{.+}', (c) =>
    answer(c, async () => {
      const depth = c.req.routePath.split('/').length - 1;
      const fromPath = new URL(c.req.url).pathname.split('/').slice(depth).map(pathArgument);
      const value = c.req.method === 'POST' || c.req.method === 'PUT' ? await c.req.text() : '';
      const query = [...new URL(c.req.url).searchParams].filter(([name]) => name !== '_token').flat();
      const args = [...fromPath, ...(value === '' ? [] : [value]), ...query];
      return { result: replyJson(await run(redis, scripts.rewrite(parseCommand(args))), base64(c)) };
    }),
  );

  app.all('*', (c) => c.json({ error: 'ERR send a command: POST a JSON array to / or use /<command>/<args>' }, 400));

  return { app, close: () => redis.close() };
}

async function run(redis: RedisConnection, command: Rewritten) {
  const reply = await redis.command(command.args);
  return command.reply ? command.reply(reply) : reply;
}

function withReply(command: Rewritten, outcome: Outcome): Outcome {
  return command.reply && 'result' in outcome ? { result: command.reply(outcome.result) } : outcome;
}

function pathArgument(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new CommandError(`ERR malformed percent-encoding in the path: ${segment}`);
  }
}

/** The client asks for base64 by default, and decodes every string it gets back. */
const base64 = (c: Context) => c.req.header('upstash-encoding')?.trim().toLowerCase() === 'base64';

async function body(c: Context): Promise<unknown> {
  const text = await c.req.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new CommandError('ERR the request body is not valid JSON');
  }
}

/** Runs a request: its body with 200, or the error as Upstash words and numbers it. */
async function answer(c: Context, produce: () => Promise<unknown>) {
  try {
    return c.json(await produce());
  } catch (error) {
    if (error instanceof CommandError || isRedisError(error)) return c.json({ error: error.message }, 400);
    if (error instanceof RedisUnreachable) return c.json({ error: error.message }, 500);
    throw error;
  }
}

function authorized(c: Context, token: string): boolean {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '')?.[1];
  const given = bearer ?? c.req.query('_token');
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
