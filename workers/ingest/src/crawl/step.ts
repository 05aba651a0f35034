import type { RunRow } from '#core/db/source-runs.ts';
import type { SourceRow } from '#core/db/sources.ts';
import { type CrawlMessage, crawlMessage } from '#core/messages/crawl.ts';
import type { Ending } from '#core/qstash/worker-shell.ts';
import { GONE_AFTER_SYNCS } from '#core/sources/limits.ts';
import { normalizeUrl, originsOf, type Scope } from '#core/sources/urls.ts';
import { queueDeliveries } from '#core/webhooks/queue.ts';
import { FetchFailed, FetchRefused } from '../guarded-fetch.ts';
import { removeDocument } from '../pipeline/finish.ts';
import type { CrawlDeps } from './deps.ts';
import { type CrawlContext, crawlPage, linkOf } from './page.ts';
import { eachPolitely } from './polite.ts';
import { type Robots, readRobots } from './robots.ts';
import { readSitemap } from './sitemap.ts';

/** Sitemap files read per sync (an index and the sitemaps it names). */
const MAX_SITEMAPS = 20;
const QUOTA_STOPPED = 'Stopped: the daily ingestion quota is used up; the next sync goes on from here';
/** When robots.txt cannot be read for a server error, RFC 9309 says to assume that nothing is allowed. */
const UNREACHABLE_ROBOTS = 'User-agent: *\nDisallow: /';

/**
 * One step of a sync: on the first, the sitemaps; then the next pages of the frontier, fetched politely and
 * settled one by one (crawlPage). The step that leaves nothing pending ends the run; any other queues the
 * next. Deliveries are at least once: a step already taken (the run's `step` moved on) does nothing.
 */
export async function runCrawlStep(deps: CrawlDeps, message: CrawlMessage): Promise<void> {
  const run = await deps.runs.find(message.run_id);
  if (run?.status !== 'running' || run.step !== message.step) return settleFinished(deps, run);
  const source = await deps.sources.find(run.source_id);
  if (!source) return;
  const ctx: CrawlContext = {
    runId: run.id,
    apiKeyId: run.api_key_id,
    source,
    scope: scopeOf(source),
    chunkSize: await deps.sourceDocuments.chunkSize(source.collection_id),
    claimed: new Set(),
    quotaSpent: false,
  };
  const robots = robotsOf(deps, run);
  if (message.step === 1 && source.kind === 'site') await readSitemaps(deps, ctx, await robots(new URL(source.url).origin));

  const batch = await deps.pages.frontier(run.id, deps.pagesPerStep);
  const originOf = (page: { href: string }) => new URL(page.href).origin;
  const rules = new Map<string, Robots>();
  for (const origin of new Set(batch.map(originOf))) rules.set(origin, await robots(origin));
  const allowed = [];
  for (const page of batch) {
    if (rules.get(originOf(page))?.allowed(page.href) !== false) allowed.push(page);
    else await deps.pages.settle(source.id, run.id, page.url, page.href, page.depth, { state: 'skipped' });
  }
  await eachPolitely(
    allowed,
    originOf,
    (origin) =>
      Math.max(
        deps.politeness.trustedOrigins.includes(origin) ? 0 : deps.politeness.delayMs,
        (rules.get(origin)?.delaySeconds ?? 0) * 1000,
      ),
    deps.politeness.concurrency,
    (page) => crawlPage(deps, ctx, page),
  );

  if (!(await deps.runs.advance(run.id, message.step))) return;
  if (!ctx.quotaSpent && (await deps.pages.countPending(run.id)) > 0) {
    await deps.queue.publish([crawlMessage(deps.workerUrl, { run_id: run.id, step: message.step + 1 })]);
    return;
  }
  await finishRun(deps, run, source, ctx.quotaSpent);
}

/**
 * Ends the run. A crawl that found no page at all (the start URL unreachable, say) fails and removes nothing;
 * one that ran its course counts the pages it missed, and those missed GONE_AFTER_SYNCS times in a row go with
 * their documents. A run stopped by the quota judges nothing missing: it did not look.
 */
export async function finishRun(deps: CrawlDeps, run: Pick<RunRow, 'id'>, source: SourceRow, quotaSpent: boolean) {
  const { counts, errors } = await deps.pages.tally(run.id);
  const found = counts.added + counts.changed + counts.unchanged;
  const seed = await deps.pages.find(source.id, normalizeUrl(source.url) ?? source.url);
  let ending: { status: 'succeeded' | 'partial' | 'failed'; message: string | null };
  if (quotaSpent) ending = { status: 'partial', message: QUOTA_STOPPED };
  else if (found === 0 && !(source.kind === 'url' && seed?.state === 'gone')) {
    ending = { status: 'failed', message: `Nothing could be read${seed?.error ? `: ${seed.error}` : ''}; nothing was removed` };
  } else {
    const { gone, removed } = await deps.pages.settleMissing(source.id, run.id);
    const documents = await deps.sourceDocuments.ofPages(
      source.id,
      removed.map((page) => page.url),
    );
    for (const doc of documents) {
      // Marked first: should a store fail, the ingest worker's sweep finishes the removal.
      await removeDocument(deps, doc).catch((error: unknown) =>
        deps.log.error('source_document_removal_failed', error, { source_id: source.id, document_id: doc.id }),
      );
    }
    counts.gone = gone;
    counts.removed = documents.length;
    // A page removed now says so, rather than that it was gone again.
    const removedUrls = new Set(documents.map((doc) => doc.source_url));
    errors.splice(0, errors.length, ...errors.filter((error) => !removedUrls.has(error.url)));
    errors.push(
      ...documents.map((doc) => ({
        url: doc.source_url ?? doc.name,
        message: `Removed: gone for ${GONE_AFTER_SYNCS} syncs in a row`,
      })),
    );
    ending = {
      status: counts.failed > 0 ? 'partial' : 'succeeded',
      message: counts.failed > 0 ? `${counts.failed} pages failed` : null,
    };
  }
  const ended = await deps.runs.finish(run.id, { ...ending, counts, errors });
  if (ended.ended) await queueDeliveries(deps, ended.deliveries);
}

/** QStash's failure callback for a step: every attempt failed, so the run ends rather than wait for ever. */
export async function recordFailedCrawl(deps: CrawlDeps, message: CrawlMessage, ending: Ending): Promise<void> {
  const run = await deps.runs.find(message.run_id);
  if (run?.status !== 'running') return settleFinished(deps, run);
  const { counts, errors } = await deps.pages.tally(run.id);
  deps.log.error('crawl_step_failed', undefined, {
    run_id: run.id,
    step: message.step,
    last_failure: ending.lastFailure ?? null,
  });
  const ended = await deps.runs.finish(run.id, {
    status: 'failed',
    message: 'The sync stopped: a step failed repeatedly; nothing was removed',
    counts,
    errors,
  });
  if (ended.ended) await queueDeliveries(deps, ended.deliveries);
}

/** A step delivered after its run ended: the ending's webhook deliveries that the queue did not take go again. */
async function settleFinished(deps: CrawlDeps, run: RunRow | undefined) {
  if (run && run.status !== 'running') await queueDeliveries(deps, await deps.deliveries.unqueuedForJob(run.id));
}

export function scopeOf(source: SourceRow): Scope {
  return {
    origins: originsOf(source.url, source.allowed_origins),
    include: source.include_patterns,
    exclude: source.exclude_patterns,
  };
}

/** Each origin's robots.txt, read once per run and kept on it, so that later steps need not ask again. */
function robotsOf(deps: CrawlDeps, run: RunRow): (origin: string) => Promise<Robots> {
  const known = new Map(Object.entries(run.robots ?? {}));
  return async (origin) => {
    if (!known.has(origin)) {
      const text = await fetchRobots(deps, origin);
      await deps.runs.setRobots(run.id, origin, text);
      known.set(origin, text);
    }
    return readRobots(origin, known.get(origin) ?? null);
  };
}

async function fetchRobots(deps: CrawlDeps, origin: string): Promise<string | null> {
  try {
    const fetched = await deps.fetchPage(`${origin}/robots.txt`, {
      checkHop: (url) => (url.origin === origin ? null : 'robots.txt redirected to another origin'),
    });
    return new TextDecoder().decode(fetched.bytes.subarray(0, 512 * 1024));
  } catch (error) {
    if (error instanceof FetchFailed && error.transient) throw error;
    // 4xx: no rules (RFC 9309 §2.3.1.3); a server error or no answer: assume everything is disallowed (§2.3.1.4).
    if (error instanceof FetchFailed && error.status !== undefined && error.status < 500) return null;
    if (error instanceof FetchFailed || error instanceof FetchRefused) return UNREACHABLE_ROBOTS;
    throw error;
  }
}

/** The pages the source's sitemap (or those its robots.txt names) lists join the frontier at depth 1. */
async function readSitemaps(deps: CrawlDeps, ctx: CrawlContext, robots: Robots) {
  const queue = ctx.source.sitemap_url ? [ctx.source.sitemap_url] : robots.sitemaps;
  const seen = new Set<string>();
  for (let next = queue.shift(); next !== undefined && seen.size < MAX_SITEMAPS; next = queue.shift()) {
    if (seen.has(next)) continue;
    seen.add(next);
    let bytes: Uint8Array;
    try {
      bytes = (
        await deps.fetchPage(next, { checkHop: (url) => (ctx.scope.origins.includes(url.origin) ? null : 'off the source') })
      ).bytes;
    } catch (error) {
      if (error instanceof FetchFailed && error.transient) throw error;
      deps.log.warn('sitemap_unreadable', {
        source_id: ctx.source.id,
        sitemap: next,
        cause: error instanceof Error ? error.message.slice(0, 300) : null,
      });
      continue;
    }
    const sitemap = readSitemap(bytes);
    queue.push(...sitemap.sitemaps);
    const links = sitemap.pages.flatMap((href) => linkOf(href, ctx.scope));
    await deps.pages.add(ctx.source.id, ctx.runId, links, 1, ctx.source.max_pages);
  }
}
