import type { Queue } from '#core/adapters/queue.ts';
import type { Caller } from '#core/caller.ts';
import { isUuid } from '#core/db/client.ts';
import type { DocumentRepo } from '#core/db/documents.ts';
import type { PageRepo, PageRow } from '#core/db/source-pages.ts';
import type { RunRepo, RunRow } from '#core/db/source-runs.ts';
import type { SourceChanges, SourceKind, SourceRepo, SourceRow, SourceSchedule } from '#core/db/sources.ts';
import { conflict, DomainError, forbidden, invalid, notFound, unavailable } from '#core/errors.ts';
import { quotaRefusal, secondsUntilQuotaResets } from '#core/ingest-quota.ts';
import type { Logger } from '#core/log.ts';
import { DEFAULT_SITE_DEPTH, DEFAULT_SITE_PAGES } from '#core/sources/limits.ts';
import { startRun } from '#core/sources/start-run.ts';
import type { UrlVerdict } from '#core/urls/url-policy.ts';
import type { DocumentMetadata } from '#retrieval/document-facets.ts';
import type { AccessService } from './access.ts';
import type { Audit } from './audit.ts';
import type { Purge } from './purge.ts';

export interface SourcesDeps {
  access: AccessService;
  audit: Audit;
  sources: SourceRepo;
  runs: RunRepo;
  pages: PageRepo;
  documents: DocumentRepo;
  purge: Purge;
  /** Chunks made today per user, against `chunksPerDay`: a sync is refused once they are used up. */
  usedToday: (userId: string) => Promise<number>;
  chunksPerDay: number;
  /** Null when ingestion is disabled (no queue configured). */
  queue: Queue | null;
  workerUrl: string | null;
  checkUrl: (url: string) => Promise<UrlVerdict>;
  log: Logger;
}

export interface NewSourceInput {
  kind: SourceKind;
  url: string;
  collection_id?: string | null;
  schedule?: SourceSchedule | null;
  metadata?: DocumentMetadata;
  sitemap_url?: string | null;
  max_pages?: number;
  max_depth?: number;
  include?: string[];
  exclude?: string[];
  allowed_origins?: string[];
}

export type SourceUpdate = Omit<Partial<NewSourceInput>, 'kind' | 'url' | 'collection_id' | 'metadata'> & { paused?: boolean };

/** A run as clients see it: its counts, read from its pages while it runs. */
export interface RunView {
  id: string;
  source_id: string;
  trigger: RunRow['trigger'];
  status: RunRow['status'];
  counts: Record<'found' | 'fetched' | 'added' | 'changed' | 'unchanged' | 'failed' | 'skipped' | 'gone' | 'removed', number>;
  errors: { url: string; message: string }[];
  message: string | null;
  started_at: string;
  finished_at: string | null;
}

/** Documents a DELETE removes itself; the ingest worker's sweep finishes any beyond, already unlisted. */
const REMOVED_PER_REQUEST = 500;

export function createSourceService(deps: SourcesDeps) {
  const { access, audit, sources, runs, pages } = deps;

  function requireQueue(): { queue: Queue; workerUrl: string } {
    if (!deps.queue || !deps.workerUrl) throw unavailable('Ingestion is disabled on this deployment');
    return { queue: deps.queue, workerUrl: deps.workerUrl };
  }

  /** Where sources go and are managed: a collection's owner or a member holding `ingest`; else the caller's personal space. */
  async function requireIngest(caller: Caller, collectionId: string | null) {
    if (!collectionId) return access.requireUnrestricted(caller);
    const { role, permission } = await access.requireParticipant(caller, collectionId);
    if (role !== 'owner' && permission !== 'ingest') {
      throw forbidden('Managing sources needs the ingest permission on this collection');
    }
  }

  /** A personal source is its creator's alone (404 to anyone else); a collection's follows the collection. */
  async function managed(caller: Caller, id: string): Promise<SourceRow> {
    const source = isUuid(id) ? await sources.find(id) : undefined;
    if (!source || (!source.collection_id && source.user_id !== caller.id)) throw notFound('Source');
    await requireIngest(caller, source.collection_id);
    return source;
  }

  /** The start URL and every allowed origin pass the URL-ingestion address rules now; each fetch is checked again. */
  async function checked(field: string, url: string): Promise<string> {
    const verdict = await deps.checkUrl(url);
    if (!verdict.ok) throw invalid(field, verdict.reason, 'url_refused');
    return verdict.url.href;
  }

  async function origins(list: string[] | undefined): Promise<string[] | undefined> {
    if (!list) return undefined;
    const out: string[] = [];
    for (const [index, entry] of list.entries()) {
      const href = await checked(`allowed_origins.${index}`, entry);
      out.push(new URL(href).origin);
    }
    return [...new Set(out)];
  }

  async function requireQuota(userId: string) {
    if ((await deps.usedToday(userId)) < deps.chunksPerDay) return;
    throw new DomainError('quota_exceeded', quotaRefusal(deps.chunksPerDay), { retryAfter: secondsUntilQuotaResets() });
  }

  async function present(rows: SourceRow[]) {
    const ids = rows.map((row) => row.id);
    const [latest, counts] = await Promise.all([runs.latest(ids), pages.countDocuments(ids)]);
    const views = new Map<string, RunView>();
    for (const [id, run] of latest) views.set(id, await runView(run));
    return rows.map((row) => ({
      id: row.id,
      collection_id: row.collection_id,
      kind: row.kind,
      url: row.url,
      sitemap_url: row.sitemap_url,
      max_pages: row.max_pages,
      max_depth: row.max_depth,
      include: row.include_patterns,
      exclude: row.exclude_patterns,
      allowed_origins: row.allowed_origins,
      schedule: row.schedule,
      paused: row.paused,
      metadata: row.metadata,
      next_sync_at: row.paused ? null : row.next_sync_at,
      pages: counts.get(row.id) ?? 0,
      last_run: views.get(row.id) ?? null,
      created_by: row.user_id,
      created_at: row.created_at,
      updated_at: row.updated_at,
    }));
  }

  async function runView(run: RunRow): Promise<RunView> {
    const live = run.status === 'running' ? await pages.tally(run.id) : undefined;
    const counts = live?.counts ?? run;
    return {
      id: run.id,
      source_id: run.source_id,
      trigger: run.trigger,
      status: run.status,
      counts: {
        found: counts.found,
        fetched: counts.fetched,
        added: counts.added,
        changed: counts.changed,
        unchanged: counts.unchanged,
        failed: counts.failed,
        skipped: counts.skipped,
        gone: counts.gone,
        removed: counts.removed,
      },
      errors: live?.errors ?? run.errors,
      message: run.message,
      started_at: run.started_at,
      finished_at: run.finished_at,
    };
  }

  async function sync(caller: Caller, source: SourceRow, trigger: 'created' | 'manual') {
    const { queue, workerUrl } = requireQueue();
    // The run's jobs are the source owner's: a key goes with them only when it is the owner's, so that a usage
    // row never pairs one user with another's key (a member syncing a collection's source).
    const apiKeyId = caller.id === source.user_id ? (caller.key?.id ?? null) : null;
    const run = await startRun({ runs, queue, workerUrl }, source, trigger, apiKeyId);
    if (!run) throw conflict('A sync of this source is already running; watch its last_run');
    return run;
  }

  return {
    /** Adds the source and starts its first sync at once. */
    async create(caller: Caller, input: NewSourceInput) {
      requireQueue();
      const collectionId = input.collection_id || null;
      await requireIngest(caller, collectionId);
      await requireQuota(caller.id);
      const url = await checked('url', input.url);
      const sitemap = input.sitemap_url ? await checked('sitemap_url', input.sitemap_url) : null;
      const source = await sources.insert({
        user_id: caller.id,
        collection_id: collectionId,
        kind: input.kind,
        url,
        sitemap_url: sitemap,
        max_pages: input.max_pages ?? DEFAULT_SITE_PAGES,
        max_depth: input.max_depth ?? DEFAULT_SITE_DEPTH,
        include_patterns: input.include ?? [],
        exclude_patterns: input.exclude ?? [],
        allowed_origins: (await origins(input.allowed_origins)) ?? [],
        metadata: input.metadata ?? {},
        schedule: input.schedule ?? null,
      });
      try {
        await sync(caller, source, 'created');
      } catch (error) {
        await sources.delete(source.id);
        throw error;
      }
      await audit(
        caller,
        'source.created',
        { type: 'source', id: source.id, collectionId: source.collection_id },
        { kind: source.kind, url: source.url, schedule: source.schedule },
      );
      const [view] = await present([source]);
      return view as NonNullable<typeof view>;
    },

    /**
     * One collection's sources, the personal space's (`null`), or every source the caller may manage; a key
     * restricted to a collection lists that one's. A collection that does not exist is 404 before anything else.
     */
    async list(caller: Caller, collectionId: string | null | undefined) {
      const place = collectionId === undefined ? caller.key?.collectionId : collectionId;
      if (place === undefined) return present(await sources.listManaged(caller.id));
      await requireIngest(caller, place);
      return present(await sources.list(place ? { collectionId: place } : { userId: caller.id }));
    },

    async get(caller: Caller, id: string) {
      const [view] = await present([await managed(caller, id)]);
      return view as NonNullable<typeof view>;
    },

    async update(caller: Caller, id: string, input: SourceUpdate) {
      const source = await managed(caller, id);
      const changes: SourceChanges = {
        ...(input.schedule !== undefined ? { schedule: input.schedule } : {}),
        ...(input.paused !== undefined ? { paused: input.paused } : {}),
        ...(input.sitemap_url !== undefined
          ? { sitemap_url: input.sitemap_url ? await checked('sitemap_url', input.sitemap_url) : null }
          : {}),
        ...(input.max_pages !== undefined ? { max_pages: input.max_pages } : {}),
        ...(input.max_depth !== undefined ? { max_depth: input.max_depth } : {}),
        ...(input.include !== undefined ? { include_patterns: input.include } : {}),
        ...(input.exclude !== undefined ? { exclude_patterns: input.exclude } : {}),
        ...(input.allowed_origins !== undefined ? { allowed_origins: (await origins(input.allowed_origins)) ?? [] } : {}),
      };
      const updated = await sources.update(source.id, changes);
      if (!updated) throw notFound('Source');
      const [view] = await present([updated]);
      return view as NonNullable<typeof view>;
    },

    /**
     * Removes the source with every document it made. The documents are marked first (unlisted and unsearched
     * at once) in the statement that deletes the source; then each goes with its vectors and files. Any a
     * failure leaves are finished by the ingest worker's sweep. A sync under way stops at its next step.
     */
    async remove(caller: Caller, id: string): Promise<{ deleted: string; documents_removed: number }> {
      const source = await managed(caller, id);
      const marked = await sources.delete(source.id);
      for (const doc of marked.slice(0, REMOVED_PER_REQUEST)) {
        try {
          await deps.purge(doc);
        } catch (error) {
          deps.log.error('source_document_removal_failed', error, {
            source_id: source.id,
            document_id: doc.id,
            left_for: 'sweep',
          });
        }
      }
      await audit(
        caller,
        'source.removed',
        { type: 'source', id: source.id, collectionId: source.collection_id },
        { kind: source.kind, url: source.url, documents_removed: marked.length },
      );
      return { deleted: source.id, documents_removed: marked.length };
    },

    async sync(caller: Caller, id: string): Promise<RunView> {
      const source = await managed(caller, id);
      await requireQuota(source.user_id);
      return runView(await sync(caller, source, 'manual'));
    },

    async runs(caller: Caller, id: string, page: { limit: number; offset: number }): Promise<RunView[]> {
      const source = await managed(caller, id);
      return Promise.all((await runs.list(source.id, page)).map(runView));
    },

    async pages(caller: Caller, id: string, page: { limit: number; offset: number }) {
      const source = await managed(caller, id);
      return (await pages.list(source.id, page)).map(pageView);
    },
  };
}

function pageView(page: PageRow) {
  const status: 'ok' | 'pending' | 'failed' | 'gone' | 'skipped' =
    page.state === 'added' || page.state === 'changed' || page.state === 'unchanged' || page.state === 'alias'
      ? 'ok'
      : page.state;
  return {
    url: page.url,
    document_id: page.document_id,
    title: page.title,
    status,
    error: page.error,
    last_fetched_at: page.last_fetched_at,
    last_changed_at: page.last_changed_at,
  };
}

export type SourceService = ReturnType<typeof createSourceService>;
