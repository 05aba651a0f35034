import { GONE_AFTER_SYNCS, MAX_RUN_ERRORS } from '../sources/limits.ts';
import type { Sql } from './client.ts';
import type { RunCounts, RunError } from './source-runs.ts';

/**
 * Where a page stands in its latest run: waiting, or how its fetch ended. `alias` is an address that led to
 * another (a redirect, a canonical link); `skipped` one that robots.txt disallows, never fetched.
 */
export type PageState = 'pending' | 'added' | 'changed' | 'unchanged' | 'failed' | 'gone' | 'skipped' | 'alias';
export const FOUND_STATES = ['added', 'changed', 'unchanged'] as const;

export interface PageRow {
  source_id: string;
  url: string;
  href: string;
  document_id: string | null;
  title: string | null;
  etag: string | null;
  last_modified: string | null;
  content_sha256: string | null;
  links: string[] | null;
  depth: number;
  run_id: string | null;
  state: PageState;
  missed: number;
  /** Why its fetch failed, or that it is gone, in plain words. */
  error: string | null;
  last_fetched_at: string | null;
  last_changed_at: string | null;
}

/** A link found on a page: its key, and the address to fetch. */
export interface FoundLink {
  url: string;
  href: string;
}

/** What a fetch of a page settled. */
export type PageUpdate = Partial<
  Pick<PageRow, 'document_id' | 'title' | 'etag' | 'last_modified' | 'content_sha256' | 'links' | 'state' | 'error'>
> & { fetched?: boolean; changed?: boolean };

export function createPageRepo(sql: Sql) {
  return {
    /** The next pages of a run's frontier, shallowest first. */
    frontier(runId: string, limit: number): Promise<PageRow[]> {
      return sql<PageRow[]>`
        select * from source_pages where run_id = ${runId} and state = 'pending' order by depth, url limit ${limit}`;
    },

    async find(sourceId: string, url: string): Promise<PageRow | undefined> {
      const [row] = await sql<PageRow[]>`select * from source_pages where source_id = ${sourceId} and url = ${url}`;
      return row;
    },

    /**
     * Adds links to the run's frontier, in their order, while it holds fewer than `maxPages`; a page the run
     * holds already is not added again. Returns how many were added.
     */
    async add(sourceId: string, runId: string, links: FoundLink[], depth: number, maxPages: number): Promise<number> {
      if (links.length === 0) return 0;
      const rows = await sql`
        with candidate as (
          select c.value ->> 'url' as url, c.value ->> 'href' as href, c.n
            from jsonb_array_elements(${sql.json(links as never)}) with ordinality as c (value, n)
        ), fresh as (
          select distinct on (c.url) c.url, c.href, c.n from candidate c
           where not exists (select 1 from source_pages p
                              where p.source_id = ${sourceId} and p.url = c.url and p.run_id = ${runId})
           order by c.url, c.n
        ), room as (
          select greatest(0, ${maxPages} - (select count(*) from source_pages where source_id = ${sourceId} and run_id = ${runId}))::int as n
        )
        insert into source_pages (source_id, url, href, depth, run_id, state)
        select ${sourceId}, f.url, f.href, ${depth}, ${runId}, 'pending' from fresh f
         order by f.n limit (select n from room)
        on conflict (source_id, url) do update
           set run_id = excluded.run_id, state = 'pending', depth = excluded.depth, href = excluded.href
        returning url`;
      return rows.length;
    },

    /** Records what fetching a page found; `url` may be a canonical address the run had not queued. */
    async settle(sourceId: string, runId: string, url: string, href: string, depth: number, update: PageUpdate): Promise<void> {
      const { fetched, changed, links, ...fields } = update;
      const row = {
        error: null,
        ...fields,
        ...(links !== undefined ? { links: sql.json(links) } : {}),
        run_id: runId,
        ...(fetched ? { last_fetched_at: sql`now()` } : {}),
        ...(changed ? { last_changed_at: sql`now()` } : {}),
      };
      const columns = Object.keys(row);
      await sql`
        insert into source_pages ${sql({ source_id: sourceId, url, href, depth, state: 'pending', ...row } as never)}
        on conflict (source_id, url) do update set ${sql(row as never, columns as never)}`;
    },

    /** Whether the run has settled this page already (another address led to it). */
    async settledInRun(sourceId: string, runId: string, url: string): Promise<boolean> {
      const [row] = await sql`
        select 1 from source_pages where source_id = ${sourceId} and url = ${url} and run_id = ${runId} and state <> 'pending'`;
      return Boolean(row);
    },

    async countPending(runId: string): Promise<number> {
      const [row] = await sql<{ n: number }[]>`
        select count(*)::int as n from source_pages where run_id = ${runId} and state = 'pending'`;
      return row?.n ?? 0;
    },

    /**
     * A finished crawl's verdict on the pages it did not find well: a page it did not reach (no longer linked
     * within the limits), found gone, or now disallowed, is missed once more; one found is missed no more.
     * Pages missed GONE_AFTER_SYNCS times in a row are returned, with their documents, and their rows go.
     */
    async settleMissing(sourceId: string, runId: string): Promise<{ gone: number; removed: PageRow[] }> {
      const [counted] = await sql<{ gone: number }[]>`
        with missed as (
          update source_pages
             set missed = case when run_id = ${runId} and state in ('added', 'changed', 'unchanged') then 0 else missed + 1 end
           where source_id = ${sourceId} and not (run_id = ${runId} and state = 'failed')
          returning missed, document_id
        )
        select count(*)::int as gone from missed where missed > 0 and document_id is not null`;
      const removed = await sql<PageRow[]>`
        delete from source_pages where source_id = ${sourceId} and missed >= ${GONE_AFTER_SYNCS} returning *`;
      return { gone: counted?.gone ?? 0, removed };
    },

    /** A run's counts and errors so far, from its pages (`gone` here: found gone by a 404 or 410). */
    async tally(runId: string): Promise<{ counts: RunCounts; errors: RunError[] }> {
      const [row] = await sql<RunCounts[]>`
        select count(*) filter (where state <> 'alias')::int as found,
               count(*) filter (where state not in ('pending', 'skipped'))::int as fetched,
               count(*) filter (where state = 'added')::int as added,
               count(*) filter (where state = 'changed')::int as changed,
               count(*) filter (where state = 'unchanged')::int as unchanged,
               count(*) filter (where state = 'failed')::int as failed,
               count(*) filter (where state = 'skipped')::int as skipped,
               count(*) filter (where state = 'gone')::int as gone,
               0 as removed
          from source_pages where run_id = ${runId}`;
      const errors = await sql<RunError[]>`
        select url, error as message from source_pages
         where run_id = ${runId} and state in ('failed', 'gone') and error is not null order by url limit ${MAX_RUN_ERRORS}`;
      return { counts: row as RunCounts, errors: [...errors] };
    },

    list(sourceId: string, page: { limit: number; offset: number }): Promise<PageRow[]> {
      return sql<PageRow[]>`
        select * from source_pages where source_id = ${sourceId} and state <> 'alias'
         order by url limit ${page.limit} offset ${page.offset}`;
    },

    async countDocuments(sourceIds: string[]): Promise<Map<string, number>> {
      if (sourceIds.length === 0) return new Map();
      const rows = await sql<{ source_id: string; n: number }[]>`
        select source_id, count(*)::int as n from source_pages
         where source_id in (select value::uuid from jsonb_array_elements_text(${sql.json(sourceIds)})) and document_id is not null group by source_id`;
      return new Map(rows.map((row) => [row.source_id, row.n]));
    },
  };
}

export type PageRepo = ReturnType<typeof createPageRepo>;
