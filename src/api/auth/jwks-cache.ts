import { createLocalJWKSet, errors, type FlattenedJWSInput, type JSONWebKeySet, type JWSHeaderParameters } from 'jose';
import { unavailable } from '#core/errors.ts';
import { logUnowned } from '#core/log.ts';

/** How long keys are trusted, and how often the provider may be asked. */
export interface JwksSettings {
  /** Keys older than this are refreshed in the background; they keep verifying meanwhile. */
  refreshSeconds: number;
  /** Keys older than this are no longer used: a token waits for a fresh fetch, or gets 503 if it fails. */
  maxStaleSeconds: number;
  /**
   * At most one fetch per key set in this time. After a success it stops tokens with made-up key ids
   * from driving fetches; after a failure it is how long the failure is remembered.
   */
  cooldownSeconds: number;
}

/** Runs work past the response (the worker's waitUntil), so a background refresh is not cut off. */
export type Background = (work: Promise<unknown>) => void;

const FETCH_TIMEOUT_MS = 5_000;
/** How long a request waits for a fetch another request started, before it counts that fetch as lost. */
const JOIN_DEADLINE_MS = FETCH_TIMEOUT_MS + 1_000;
const JOIN_POLL_MS = 10;

interface Keys {
  verify: ReturnType<typeof createLocalJWKSet>;
  fetchedAt: number;
}

interface Flight {
  startedAt: number;
}

const providerUnreachable = () =>
  unavailable('Authentication is temporarily unavailable: the identity provider cannot be reached');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The identity provider's keys, kept with the time they were fetched. Instead of jose's remote key set,
 * whose keys expire with its cache (every token then fails while the provider is down) and which, on
 * Workers, fetches once per waiting request: here there is one fetch in flight at a time, at most one
 * per cooldown, and keys that still verify are used up to `maxStaleSeconds` while refreshes fail.
 * An unknown key id while the provider cannot be reached is 503, since it may be a rotated key.
 */
export class JwksCache {
  #keys: Keys | undefined;
  #lastAttemptAt = Number.NEGATIVE_INFINITY;
  #lastAttemptFailed = false;
  #flight: Flight | undefined;

  constructor(
    private readonly url: string,
    private readonly settings: JwksSettings,
  ) {}

  /** The key that verifies a token with this header, for jose's jwtVerify. */
  async key(header: JWSHeaderParameters, token: FlattenedJWSInput, background: Background) {
    const keys = await this.#usableKeys(background);
    try {
      return await keys.verify(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
    }
    // An unknown key id: the provider may have rotated its keys since the last fetch.
    await this.#refresh();
    if (this.#lastAttemptFailed) throw providerUnreachable();
    return (this.#keys ?? keys).verify(header, token);
  }

  async #usableKeys(background: Background): Promise<Keys> {
    const age = this.#keys ? Date.now() - this.#keys.fetchedAt : Number.POSITIVE_INFINITY;
    if (this.#keys && age < this.settings.refreshSeconds * 1000) return this.#keys;
    if (this.#keys && age < this.settings.maxStaleSeconds * 1000) {
      // Served at once; the fetch, if this request starts one, outlives the response.
      if (!this.#flying()) background(this.#refresh());
      return this.#keys;
    }
    await this.#refresh();
    const keys = this.#keys;
    if (!keys || Date.now() - keys.fetchedAt >= this.settings.maxStaleSeconds * 1000) throw providerUnreachable();
    return keys;
  }

  /** Single flight and rate-limited: waits for the fetch in flight, or does nothing within the cooldown. */
  #refresh(): Promise<void> {
    if (this.#flight && this.#flying()) return this.#join(this.#flight);
    // A flight that never landed went with the request that started it (a client that hung up).
    if (this.#flight) this.#lose(this.#flight);
    const now = Date.now();
    if (now - this.#lastAttemptAt < this.settings.cooldownSeconds * 1000) return Promise.resolve();
    this.#lastAttemptAt = now;
    const flight: Flight = { startedAt: now };
    this.#flight = flight;
    return this.#fetch().finally(() => {
      if (this.#flight === flight) this.#flight = undefined;
    });
  }

  #flying(): boolean {
    return this.#flight !== undefined && Date.now() - this.#flight.startedAt < JOIN_DEADLINE_MS;
  }

  // Polls in the caller's own request rather than awaiting the fetch's promise: on Workers, a request
  // that awaits another request's promise is cancelled with it if that request ends first.
  async #join(flight: Flight): Promise<void> {
    for (let waited = 0; this.#flight === flight && waited < JOIN_DEADLINE_MS; waited += JOIN_POLL_MS) {
      await sleep(JOIN_POLL_MS);
    }
    if (this.#flight === flight) this.#lose(flight);
  }

  #lose(flight: Flight) {
    if (this.#flight !== flight) return;
    this.#flight = undefined;
    this.#lastAttemptFailed = true;
  }

  async #fetch(): Promise<void> {
    try {
      const jwks = await fetchKeySet(this.url);
      this.#keys = { verify: createLocalJWKSet(jwks), fetchedAt: Date.now() };
      this.#lastAttemptFailed = false;
    } catch (error) {
      this.#lastAttemptFailed = true;
      logUnowned('warn', 'jwks_fetch_failed', {
        worker: 'api',
        message: `JWKS fetch from ${this.url} failed: ${error instanceof Error ? error.message.slice(0, 300) : String(error)}`,
      });
    }
  }
}

async function fetchKeySet(url: string): Promise<JSONWebKeySet> {
  const response = await fetch(url, {
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`status ${response.status}`);
  }
  // createLocalJWKSet refuses anything that is not a key set.
  return (await response.json()) as JSONWebKeySet;
}

const caches = new Map<string, JwksCache>();

/** One cache per isolate, key set URL and settings. */
export function jwksCacheFor(url: string, settings: JwksSettings): JwksCache {
  const id = [url, settings.refreshSeconds, settings.maxStaleSeconds, settings.cooldownSeconds].join(' ');
  let cache = caches.get(id);
  if (!cache) {
    cache = new JwksCache(url, settings);
    caches.set(id, cache);
  }
  return cache;
}
