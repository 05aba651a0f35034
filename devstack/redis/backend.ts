import { ping, redacted } from './ping.ts';
import { findRedisServer, spawnRedisServer } from './redis-server.ts';

export interface RedisBackendOptions {
  /** A Redis to use as it is (REDIS_URL); it is shared, so the devstack never empties it. */
  redisUrl?: string;
  /** Where a redis-server the devstack starts keeps its files. */
  dataDir: string;
  /** Where to look for redis-server; default PATH. */
  searchPath?: string;
  log?: (line: string) => void;
}

export interface RedisBackend {
  /** redis://…: what the REST front connects to. */
  url: string;
  /** `url` when it was given, `redis-server` when the devstack started one. */
  source: 'url' | 'redis-server';
  stop(): Promise<void>;
}

/**
 * The Redis behind the devstack's Upstash REST front: the one at `redisUrl` if given; else
 * a redis-server of its own, if one is installed; else none, and the API's rate limiting is
 * off (its worker gets no Upstash Redis settings).
 */
export async function startRedisBackend(options: RedisBackendOptions): Promise<RedisBackend | null> {
  const log = options.log ?? (() => {});
  if (options.redisUrl) {
    const answered = await ping(options.redisUrl);
    if (answered !== true) {
      throw new Error(
        `REDIS_URL ${redacted(options.redisUrl)} does not answer (${answered}): start that Redis, or unset REDIS_URL`,
      );
    }
    log(`redis: Upstash Redis REST over ${redacted(options.redisUrl)}`);
    return { url: options.redisUrl, source: 'url', stop: async () => {} };
  }
  const binary = await findRedisServer(options.searchPath);
  if (!binary) {
    log('redis: rate limiting is off: no REDIS_URL and no redis-server on PATH (set REDIS_URL, or install redis-server)');
    return null;
  }
  const spawned = await spawnRedisServer(binary, options.dataDir);
  log(`redis: Upstash Redis REST over ${binary} at ${spawned.url} (files in ${options.dataDir})`);
  return { ...spawned, source: 'redis-server' };
}
