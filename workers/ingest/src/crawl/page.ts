import { isUniqueViolation } from '#core/db/client.ts';
import type { NewDocument } from '#core/db/documents.ts';
import type { FoundLink, PageRow, PageUpdate } from '#core/db/source-pages.ts';
import type { SourceRow } from '#core/db/sources.ts';
import { CONTENT_TYPES, type DocType } from '#core/documents/detect-type.ts';
import { stepMessage } from '#core/messages/ingest.ts';
import { documentFolder, namespaceFor } from '#core/namespaces.ts';
import { sha256Hex } from '#core/secrets.ts';
import { CRAWLER_TOKEN } from '#core/sources/limits.ts';
import { inScope, normalizeUrl, type Scope } from '#core/sources/urls.ts';
import { FetchFailed, FetchRefused } from '../guarded-fetch.ts';
import { ParseError } from '../parsers/types.ts';
import { typeOfPage, viewsOf } from '../pipeline/source.ts';
import type { CrawlDeps } from './deps.ts';
import { readLinks } from './links.ts';

/** What a step knows while it crawls: the run, its source and scope, and what it has settled so far. */
export interface CrawlContext {
  runId: string;
  /** The API key that started the run, for the jobs it queues; null for a schedule or a bearer token. */
  apiKeyId: string | null;
  source: SourceRow;
  scope: Scope;
  chunkSize: number;
  /** Keys this step is settling, so two addresses of one page (a redirect, a canonical link) settle it once. */
  claimed: Set<string>;
  /** Set once the owner's daily quota is used up: the run stops after this step. */
  quotaSpent: boolean;
}

const STILL_INGESTING = 'Its previous version is still being ingested; the next sync reads it again';
const QUOTA_SPENT = 'The daily ingestion quota is used up; the next sync reads it';

/**
 * Fetches one page of the frontier and settles it: not modified (a 304, or the same bytes) costs no parsing and
 * no embedding; a new or changed page is stored and becomes a document (a new version of the page's document,
 * through the same replace path as an upload) whose ingest job is queued. Its links join the frontier.
 */
export async function crawlPage(deps: CrawlDeps, ctx: CrawlContext, page: PageRow): Promise<void> {
  const settle = (url: string, update: PageUpdate) =>
    deps.pages.settle(ctx.source.id, ctx.runId, url, page.href, page.depth, update);
  const scopeRule = (url: URL) =>
    ctx.scope.origins.includes(url.origin) ? null : `The page redirected off the source’s allowed origins (to ${url.origin})`;

  let fetched: Awaited<ReturnType<CrawlDeps['fetchPage']>>;
  try {
    fetched = await deps.fetchPage(page.href, { headers: conditional(page), checkHop: scopeRule });
  } catch (error) {
    if (error instanceof FetchFailed && (error.status === 404 || error.status === 410)) {
      return settle(page.url, { state: 'gone', fetched: true, error: `Gone (HTTP ${error.status})` });
    }
    if (error instanceof FetchFailed && error.transient) throw error;
    const message = error instanceof FetchRefused || error instanceof FetchFailed ? error.message : null;
    if (message === null) throw error;
    return settle(page.url, { state: 'failed', fetched: true, error: message });
  }

  if (fetched.status === 304) {
    await deps.sourceDocuments.touch(page.document_id ? [page.document_id] : []);
    await settle(page.url, { state: 'unchanged', fetched: true, ...validators(fetched, page) });
    return follow(
      deps,
      ctx,
      page,
      (page.links ?? []).flatMap((href) => linkOf(href, ctx.scope)),
    );
  }

  // The page's own address: where the redirects ended, or the canonical link it names within the scope.
  let type: DocType;
  try {
    type = typeOfPage(fetched.contentType, fetched.url, fetched.bytes);
  } catch (error) {
    if (!(error instanceof ParseError)) throw error;
    return settle(page.url, { state: 'failed', fetched: true, error: error.message });
  }
  const read = type === 'html' ? readLinks(fetched.bytes, fetched.contentType, fetched.url, CRAWLER_TOKEN) : undefined;
  const landed = normalizeUrl(fetched.url) ?? page.url;
  const canonical = read?.canonical ? normalizeUrl(read.canonical) : null;
  const key = canonical && inScope(canonical, ctx.scope) ? canonical : landed;
  if (key !== page.url) {
    await settle(page.url, { state: 'alias', fetched: true });
    if (ctx.claimed.has(key) || (await deps.pages.settledInRun(ctx.source.id, ctx.runId, key))) return;
  }
  ctx.claimed.add(key);
  const known = key === page.url ? page : await deps.pages.find(ctx.source.id, key);
  const links = read && !read.nofollow ? read.links.flatMap((href) => linkOf(href, ctx.scope)) : [];

  const sha256 = await sha256OfBytes(fetched.bytes);
  const settleKey = (update: PageUpdate) => deps.pages.settle(ctx.source.id, ctx.runId, key, fetched.url, page.depth, update);
  const pageFields = { title: read?.title ?? null, links: links.map((l) => l.href), ...validators(fetched, known) };
  if (known?.content_sha256 === sha256) {
    await deps.sourceDocuments.touch(known.document_id ? [known.document_id] : []);
    await settleKey({ state: 'unchanged', fetched: true, ...pageFields });
    return follow(deps, ctx, page, links);
  }
  if (ctx.quotaSpent || (await deps.usedToday(ctx.source.user_id)) >= deps.quota.perDay) {
    ctx.quotaSpent = true;
    return settleKey({ state: 'failed', fetched: true, error: QUOTA_SPENT });
  }
  const stored = await storePage(deps, ctx, key, fetched.bytes, type, fetched.contentType);
  if (!stored) return settleKey({ state: 'failed', fetched: true, error: STILL_INGESTING });
  await settleKey({
    state: known?.content_sha256 ? 'changed' : 'added',
    fetched: true,
    changed: true,
    document_id: stored.documentId,
    content_sha256: sha256,
    ...pageFields,
  });
  await follow(deps, ctx, page, links);
}

/**
 * The page's bytes as the original of a new document (a new version of the page's live document, if it has
 * one), and its ingest job queued. Ids come from the run and the page, so a step retried after a crash finds
 * the document it made rather than making a second. Undefined while the page's previous version is still
 * being ingested (one new version at a time).
 */
async function storePage(
  deps: CrawlDeps,
  ctx: CrawlContext,
  url: string,
  bytes: Uint8Array,
  type: DocType,
  contentType: string | null,
): Promise<{ documentId: string } | undefined> {
  const { source } = ctx;
  const documentId = await derivedId(`${ctx.runId} ${url} document`);
  const jobId = await derivedId(`${ctx.runId} ${url} job`);
  const current = await deps.sourceDocuments.current(source.id, url);
  const replaces = current && current.id !== documentId ? current.id : undefined;
  const folder = documentFolder(namespaceFor(source.collection_id, source.user_id), documentId);
  const key = `${folder}/original.${type}`;
  if (current?.id !== documentId) {
    await deps.store.put(key, viewsOf(bytes), contentType ?? CONTENT_TYPES[type]);
    const doc: NewDocument & Record<string, unknown> = {
      id: documentId,
      collection_id: source.collection_id,
      user_id: source.user_id,
      name: url,
      source_kind: 'url',
      source_url: url,
      content_type: CONTENT_TYPES[type],
      doc_type: type,
      size_bytes: bytes.byteLength,
      storage_path: key,
      chunk_size: ctx.chunkSize,
      metadata: source.metadata,
      source_id: source.id,
      fetched_at: new Date().toISOString(),
      changed_at: new Date().toISOString(),
    };
    try {
      await deps.jobs.insertWithDocument(doc, {
        id: jobId,
        user_id: source.user_id,
        collection_id: source.collection_id,
        source: url,
        api_key_id: ctx.apiKeyId,
        ...(replaces ? { replaces_document_id: replaces } : {}),
      });
    } catch (error) {
      await deps.store.removeFolder(folder).catch(() => {});
      if (isUniqueViolation(error, 'ingest_jobs_replacing_idx')) return undefined;
      throw error;
    }
  }
  try {
    await deps.queue.publish([stepMessage(deps.workerUrl, { job_id: jobId, step: 'extract' }, source.user_id)]);
  } catch (error) {
    await deps.jobs.delete(jobId);
    await deps.db.deleteDocument(documentId);
    await deps.store.removeFolder(folder).catch(() => {});
    throw error;
  }
  return { documentId };
}

/** A site's links join the frontier one level deeper, while the run has room; a single URL follows none. */
async function follow(deps: CrawlDeps, ctx: CrawlContext, page: PageRow, links: FoundLink[]): Promise<void> {
  if (ctx.source.kind !== 'site' || page.depth >= ctx.source.max_depth || links.length === 0) return;
  await deps.pages.add(ctx.source.id, ctx.runId, links, page.depth + 1, ctx.source.max_pages);
}

/** A link the crawl may follow: normalised, and within the source's origins and patterns. */
export function linkOf(href: string, scope: Scope): FoundLink[] {
  const url = normalizeUrl(href);
  return url && inScope(url, scope) ? [{ url, href: new URL(href).href.replace(/#.*$/, '') }] : [];
}

function conditional(page: PageRow): Record<string, string> | undefined {
  if (!page.etag && !page.last_modified) return undefined;
  return {
    ...(page.etag ? { 'if-none-match': page.etag } : {}),
    ...(page.last_modified ? { 'if-modified-since': page.last_modified } : {}),
  };
}

function validators(fetched: { etag?: string | null; lastModified?: string | null }, known: PageRow | undefined) {
  return {
    etag: fetched.etag ?? known?.etag ?? null,
    last_modified: fetched.lastModified ?? known?.last_modified ?? null,
  };
}

async function sha256OfBytes(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return [...digest].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** A UUID made from text: the same text, the same id. */
async function derivedId(text: string): Promise<string> {
  const hex = await sha256Hex(text);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
