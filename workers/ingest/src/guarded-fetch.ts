import { readCapped } from '#core/bodies.ts';
import { checkUrl, DnsError, type ResolveHost } from '#core/urls/dns.ts';
import type { UrlVerdict } from '#core/urls/url-policy.ts';

/**
 * Fetches a user-supplied URL under the URL policy. Redirects are followed by hand so
 * that every hop is checked: a public page that answers `302 Location:
 * http://169.254.169.254/` must not get us to fetch the metadata service.
 */

export type FetchRefusal = 'url_not_allowed' | 'redirect_not_allowed' | 'too_many_redirects' | 'too_large';
export type FetchFailure = 'timeout' | 'http_status' | 'unreachable' | 'dns_failed';

/** Our policy stopped the fetch. The message is meant for the job's error_message. */
export class FetchRefused extends Error {
  constructor(
    readonly reason: FetchRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'FetchRefused';
  }
}

/**
 * The remote side (or DNS) did not deliver a page. The message may carry a transport detail, so
 * it is for logs; the ingest worker words the job's error_message by `reason`.
 */
export class FetchFailed extends Error {
  /** Our resolver failed, not the URL: the same fetch may well work a little later. */
  readonly transient: boolean;

  constructor(
    readonly reason: FetchFailure,
    message: string,
    readonly status?: number,
    options?: { cause?: unknown; transient?: boolean },
  ) {
    super(message, { cause: options?.cause });
    this.name = 'FetchFailed';
    this.transient = options?.transient ?? false;
  }
}

export interface GuardedFetchOptions {
  resolve: ResolveHost;
  trustedOrigins?: readonly string[];
  maxRedirects?: number;
  /** One budget for every hop, DNS lookups and the body together. */
  timeoutMs?: number;
  maxBytes: number;
  fetchImpl?: typeof fetch;
  userAgent?: string;
  /** Request headers besides the user agent and Accept: a crawl's If-None-Match and If-Modified-Since. */
  headers?: Record<string, string>;
  /**
   * A further rule for every hop (a crawl's allowed origins): a refusal message, or null to go on. Only
   * reached by URLs the address policy allows.
   */
  checkHop?: (url: URL) => string | null;
}

export interface FetchedPage {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  contentType: string | null;
  bytes: Uint8Array;
  /** Validators for a later conditional request. */
  etag?: string | null;
  lastModified?: string | null;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const DEFAULT_USER_AGENT = 'rag-service-ingest/0.1 (+url ingestion)';

export async function guardedFetch(raw: string, opts: GuardedFetchOptions): Promise<FetchedPage> {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Racing against the deadline, rather than only aborting fetch, also bounds a
  // resolver or a body read that ignores the signal.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new FetchFailed('timeout', `The server did not respond within ${formatSeconds(timeoutMs)}`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([follow(raw, opts, controller.signal), deadline]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    controller.abort();
  }
}

async function follow(raw: string, opts: GuardedFetchOptions, signal: AbortSignal): Promise<FetchedPage> {
  const fetchImpl = opts.fetchImpl ?? fetch;
  const maxRedirects = opts.maxRedirects ?? 5;
  let current = raw;
  for (let redirects = 0; ; redirects++) {
    const url = await allowedUrl(current, redirects > 0, opts);
    let response: Response;
    try {
      response = await fetchImpl(url, {
        redirect: 'manual',
        signal,
        headers: {
          ...opts.headers,
          'user-agent': opts.userAgent ?? DEFAULT_USER_AGENT,
          accept: 'text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.5',
        },
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new FetchFailed('unreachable', `The URL could not be reached (${describeNetworkError(error)})`);
    }
    const location = response.headers.get('location');
    if (REDIRECT_STATUSES.has(response.status) && location !== null) {
      await response.body?.cancel();
      if (redirects >= maxRedirects) throw new FetchRefused('too_many_redirects', 'Too many redirects');
      try {
        current = new URL(location, url).href;
      } catch {
        throw new FetchFailed('unreachable', 'The URL redirected to an invalid address');
      }
      continue;
    }
    const validators = { etag: response.headers.get('etag'), lastModified: response.headers.get('last-modified') };
    // Only a conditional request can be answered 304, and it has no body.
    if (response.status === 304 && opts.headers) {
      await response.body?.cancel();
      return {
        url: url.href,
        status: 304,
        contentType: response.headers.get('content-type'),
        bytes: new Uint8Array(),
        ...validators,
      };
    }
    if (response.status < 200 || response.status > 299) {
      await response.body?.cancel();
      throw new FetchFailed('http_status', `The URL could not be reached (HTTP ${response.status})`, response.status);
    }
    const bytes = await readPage(response, opts.maxBytes).catch((error: unknown) => {
      if (error instanceof FetchRefused || signal.aborted) throw error;
      throw new FetchFailed('unreachable', 'The connection was lost while the page was downloading');
    });
    return { url: url.href, status: response.status, contentType: response.headers.get('content-type'), bytes, ...validators };
  }
}

async function allowedUrl(raw: string, isRedirect: boolean, opts: GuardedFetchOptions): Promise<URL> {
  let verdict: UrlVerdict;
  try {
    verdict = await checkUrl(raw, { resolve: opts.resolve, trustedOrigins: opts.trustedOrigins });
  } catch (error) {
    if (error instanceof DnsError) {
      throw new FetchFailed('dns_failed', `The host name could not be looked up: ${error.message}`, undefined, {
        cause: error,
        transient: error.transient,
      });
    }
    throw error;
  }
  if (verdict.ok) {
    const refusal = opts.checkHop?.(verdict.url);
    if (refusal === null || refusal === undefined) return verdict.url;
    throw new FetchRefused(isRedirect ? 'redirect_not_allowed' : 'url_not_allowed', refusal);
  }
  if (!isRedirect) throw new FetchRefused('url_not_allowed', verdict.reason);
  if (verdict.code === 'private_address')
    throw new FetchRefused('redirect_not_allowed', 'The URL redirected to a private address');
  throw new FetchRefused(
    'redirect_not_allowed',
    `The URL redirected to an address that is not allowed: ${lowerFirst(verdict.reason)}`,
  );
}

/**
 * Content-Length may be absent (chunked) or describe the compressed body, so it only refuses a
 * page early; the running count bounds memory.
 */
async function readPage(response: Response, maxBytes: number): Promise<Uint8Array> {
  const tooLarge = () => new FetchRefused('too_large', `The page is larger than ${formatBytes(maxBytes)}`);
  // Under a content coding this is the encoded length, and the decoded body is larger still.
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const bytes = await readCapped(response.body, maxBytes);
  if (!bytes) throw tooLarge();
  return bytes;
}

function describeNetworkError(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : undefined;
  const code = (cause as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return code === 'ECONNREFUSED' ? 'connection refused' : code;
  return 'connection failed';
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

export function formatBytes(bytes: number): string {
  const mb = 1024 * 1024;
  if (bytes >= mb) return `${Number((bytes / mb).toFixed(1))} MB`;
  if (bytes >= 1024) return `${Number((bytes / 1024).toFixed(1))} KB`;
  return `${bytes} bytes`;
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}
