import { Redis } from 'ioredis';

/** True if the Redis at `url` answers PING within `timeoutMs`, else the reason it did not. */
export async function ping(url: string, timeoutMs = 3000): Promise<true | string> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return true;
  } catch (error) {
    return error instanceof Error ? error.message || error.name : String(error);
  } finally {
    redis.disconnect();
  }
}

/** The URL without its password, for logs. */
export function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}
