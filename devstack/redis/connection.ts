import { Redis, ReplyError } from 'ioredis';
import type { Outcome, Reply } from './replies.ts';

/** Redis did not answer (down, or the connection broke): not an error of the command. */
export class RedisUnreachable extends Error {
  constructor(cause: unknown) {
    super(`Redis is unreachable: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'RedisUnreachable';
  }
}

export const isRedisError = (error: unknown): error is Error => error instanceof ReplyError;

export interface RedisConnection {
  /** One command: its reply, or rejected with Redis's error (a ReplyError) or RedisUnreachable. */
  command(args: string[]): Promise<Reply>;
  /** Commands in order, not atomic: each one's reply or error. */
  pipeline(commands: string[][]): Promise<Outcome[]>;
  /** MULTI … EXEC: each command's reply or error, or rejected with Redis's error when the whole is discarded. */
  transaction(commands: string[][]): Promise<Outcome[]>;
  close(): Promise<void>;
}

/**
 * One ioredis connection for every REST request. RESP2, as Upstash answers: ioredis 6
 * speaks RESP3 unless told otherwise, which would turn maps and doubles into other shapes.
 * Replies come through callBuffer as bytes, so binary values are not decoded on the way,
 * and under the command's name in capitals, because ioredis keys its reply transformers
 * (HGETALL into an object, ZRANGE … WITHSCORES into pairs) by the lower-case name.
 */
export function connectRedis(url: string, log: (line: string) => void = () => {}): RedisConnection {
  const redis = new Redis(url, {
    protocol: 2,
    connectionName: 'devstack-upstash-rest',
    // A request while Redis is down fails within a second or so rather than queueing.
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
  });
  let down = false;
  redis.on('error', (error: Error) => {
    if (!down) log(`redis: ${error.message}; REST requests fail until it answers again`);
    down = true;
  });
  redis.on('ready', () => {
    if (down) log('redis: answering again');
    down = false;
  });

  const send = ([name = '', ...args]: string[]): Promise<Reply> =>
    (redis.callBuffer(name.toUpperCase(), ...args) as Promise<Reply>).catch((error: unknown) => {
      throw isRedisError(error) ? error : new RedisUnreachable(error);
    });

  const outcome = (settled: PromiseSettledResult<Reply>): Outcome => {
    if (settled.status === 'fulfilled') return { result: settled.value };
    if (settled.reason instanceof RedisUnreachable) throw settled.reason;
    return { error: (settled.reason as Error).message };
  };

  return {
    command: send,
    pipeline: async (commands) => (await Promise.allSettled(commands.map(send))).map(outcome),
    transaction: async (commands) => {
      // Sent in one go, nothing of another request can come between MULTI and EXEC on the connection.
      const queued = [send(['MULTI']), ...commands.map(send)];
      const exec = send(['EXEC']);
      const settled = await Promise.allSettled([...queued, exec]);
      for (const step of settled) {
        if (step.status === 'rejected' && step.reason instanceof RedisUnreachable) throw step.reason;
      }
      // Rejected with EXECABORT when a command was refused while queueing: then none ran.
      const replies = (await exec) as Reply[];
      return replies.map((reply) => (reply instanceof Error ? { error: reply.message } : { result: reply }));
    },
    close: async () => {
      if (redis.status === 'ready') await redis.quit().catch(() => {});
      redis.disconnect();
    },
  };
}
