import { z } from '@hono/zod-openapi';
import { RUN_STATUSES, RUN_TRIGGERS } from '#core/db/source-runs.ts';
import { SOURCE_KINDS, SOURCE_SCHEDULES } from '#core/db/sources.ts';
import { MAX_SITE_PAGES } from '#core/sources/limits.ts';
import { Id, OptionalCollectionId, pageQuery, pathParam, plainText, Timestamp, text } from './common.ts';
import { MetadataSchema } from './metadata.ts';

const url = text({ min: 1, max: 2048 });
const pattern = text({ min: 1, max: 200 });
const patterns = (description: string) => z.array(pattern).max(50).openapi({ description });

const Schedule = z.enum(SOURCE_SCHEDULES).nullable().openapi('WebSourceSchedule', {
  description: 'How often the service syncs it by itself: `hourly`, `daily`, `weekly`, or null (only on demand).',
});

/** What a site source's crawl may reach; a single URL's are ignored. */
const crawlFields = {
  sitemap_url: url.nullish().openapi({
    description:
      'A `sitemap.xml` (or sitemap index) whose pages are crawled too. Without it, those that the site’s robots.txt names are read.',
  }),
  max_pages: z
    .number()
    .int()
    .min(1)
    .max(MAX_SITE_PAGES)
    .optional()
    .openapi({
      description: `Pages one sync may find, at most ${MAX_SITE_PAGES.toLocaleString('en')} (default 200)`,
    }),
  max_depth: z.number().int().min(0).max(10).optional().openapi({
    description: 'Links followed from the start URL (0: the start URL and the sitemap’s pages only; default 3)',
  }),
  include: patterns(
    'Path patterns a page must match (any one) to be crawled, e.g. `/docs/*`; `*` is any run of characters and a ' +
      'trailing `$` anchors the end, as in robots.txt. Empty: every path.',
  ).optional(),
  exclude: patterns('Path patterns never crawled (they win over `include`)').optional(),
  allowed_origins: z
    .array(url)
    .max(20)
    .optional()
    .openapi({
      description:
        'Origins the crawl may fetch from, such as `https://docs.example.com`. Default: the start URL’s origin only. ' +
        'Every URL and redirect must pass the same address rules as `POST /ingest/url` as well.',
    }),
};

export const CreateSourceSchema = z
  .object({
    kind: z.enum(SOURCE_KINDS).default('site').openapi({
      description: '`url`: one page (or file) kept in sync; `site`: the pages a crawl from `url` finds',
    }),
    url: url.openapi({ description: 'The page, or the start of the site', example: 'https://docs.example.com/' }),
    collection_id: OptionalCollectionId,
    schedule: Schedule.optional(),
    metadata: MetadataSchema.optional().openapi({ description: 'Given to every document the source makes' }),
    ...crawlFields,
  })
  .strict()
  .openapi('CreateWebSource');

export const UpdateSourceSchema = z
  .object({ schedule: Schedule.optional(), paused: z.boolean().optional(), ...crawlFields })
  .strict()
  .refine((body) => Object.keys(body).length > 0, 'Give at least one field to change')
  .openapi('UpdateWebSource');

const RunCounts = z
  .object({
    found: z.number().int().openapi({ description: 'Pages the crawl found within its limits' }),
    fetched: z.number().int().openapi({ description: 'Pages requested (a 304 Not Modified counts)' }),
    added: z.number().int().openapi({ description: 'New pages, each a new document' }),
    changed: z.number().int().openapi({ description: 'Pages whose content changed: a new version of their document' }),
    unchanged: z.number().int().openapi({ description: 'Pages not modified: neither parsed nor embedded again' }),
    failed: z.number().int().openapi({ description: 'Pages that could not be fetched or stored (see `errors`)' }),
    skipped: z.number().int().openapi({ description: 'Pages robots.txt disallows: never fetched' }),
    gone: z.number().int().openapi({ description: 'Known pages this sync found gone (404, 410, or no longer linked)' }),
    removed: z.number().int().openapi({ description: 'Pages gone for a second sync in a row: their documents were removed' }),
  })
  .openapi('WebSourceRunCounts');

const RunObject = z.object({
  id: Id,
  source_id: Id,
  trigger: z.enum(RUN_TRIGGERS).openapi({ description: 'What started it' }),
  status: z.enum(RUN_STATUSES).openapi({
    description:
      '`running`, then `succeeded`; `partial` when some pages failed or the daily quota stopped it; `failed` when the start URL ' +
      'could not be read (nothing is removed then); `cancelled` when the source was deleted or paused',
  }),
  counts: RunCounts,
  errors: z
    .array(z.object({ url: z.string(), message: z.string() }))
    .openapi({ description: 'The first 100 pages that failed or were removed, with why, in plain words' }),
  message: z.string().nullable().openapi({ description: 'Why the run ended as it did, when not plainly `succeeded`' }),
  started_at: Timestamp,
  finished_at: Timestamp.nullable(),
});

export const SourceRunSchema = RunObject.openapi('WebSourceRun');

export const SourceSchema = z
  .object({
    id: Id,
    collection_id: Id.nullable().openapi({ description: 'Null for the personal namespace' }),
    kind: z.enum(SOURCE_KINDS),
    url: z.string(),
    sitemap_url: z.string().nullable(),
    max_pages: z.number().int(),
    max_depth: z.number().int(),
    include: z.array(z.string()),
    exclude: z.array(z.string()),
    allowed_origins: z.array(z.string()),
    schedule: Schedule,
    paused: z.boolean().openapi({ description: 'A paused source is not synced on its schedule; a sync on demand still runs' }),
    metadata: MetadataSchema,
    next_sync_at: Timestamp.nullable().openapi({ description: 'When the schedule syncs it next; null without one, or paused' }),
    pages: z.number().int().openapi({ description: 'Pages it holds as documents now' }),
    // Written out rather than a reference: a nullable reference made the referenced schema itself nullable.
    last_run: RunObject.nullable().openapi({ description: 'The latest sync, running or ended' }),
    created_by: Id.openapi({ description: 'Who added it: its documents are theirs, and count against their daily quota' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('WebSource');

export const SourcePageSchema = z
  .object({
    url: z.string(),
    document_id: Id.nullable().openapi({ description: 'Its current document; null until first stored' }),
    title: z.string().nullable(),
    status: z.enum(['ok', 'pending', 'failed', 'gone', 'skipped']).openapi({
      description:
        'How the latest sync found it (`pending`: not reached yet by the sync under way; `skipped`: disallowed by robots.txt, ' +
        'never fetched). A page gone (404, 410, or no longer linked within the limits) at two syncs in a row is removed.',
    }),
    error: z.string().nullable().openapi({ description: 'Why it failed or is gone, in plain words' }),
    last_fetched_at: Timestamp.nullable(),
    last_changed_at: Timestamp.nullable(),
  })
  .openapi('WebSourcePage');

export const SourceParams = z.object({ id: pathParam('id', 'Source id') });

export const SourceListQuery = z.object({
  collection_id: plainText()
    .optional()
    .openapi({
      param: { name: 'collection_id', in: 'query' },
      description:
        'One collection’s sources, or `personal` for the personal namespace’s. Omitted: every source the caller may manage.',
    }),
});

export const SourcePagesQuery = z.object({ ...pageQuery(100) });
export const SourceRunsQuery = z.object({ ...pageQuery(20) });
