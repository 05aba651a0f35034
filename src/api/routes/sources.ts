import { z } from '@hono/zod-openapi';
import { CRAWLER_TOKEN, CRAWLER_USER_AGENT } from '#core/sources/limits.ts';
import type { App } from '../context.ts';
import { json, jsonBody } from '../schemas/common.ts';
import { collectionErrors } from '../schemas/error.ts';
import {
  CreateSourceSchema,
  SourceListQuery,
  SourcePageSchema,
  SourcePagesQuery,
  SourceParams,
  SourceRunSchema,
  SourceRunsQuery,
  SourceSchema,
  UpdateSourceSchema,
} from '../schemas/sources.ts';
import { taggedRoutes } from './define-route.ts';

const route = taggedRoutes('Sources');

const ACCESS = `A collection's sources are managed by its owner and by members holding \`ingest\` (anyone else 403; a
collection that does not exist 404); a personal source by its creator alone (404 to anyone else).`;

const create = route.post('/sources', 'Add a source to keep in sync', {
  operationId: 'createSource',
  access: 'ingest',
  description: `A single URL (\`kind: "url"\`) or a site (\`kind: "site"\`): the pages a crawl from \`url\` finds by its links and
its sitemap, within \`max_pages\` (default 200, at most 2,000), \`max_depth\` (default 3), the \`include\` and \`exclude\` path
patterns and \`allowed_origins\` (default: the start URL's origin). Each page becomes a document whose name and source
are its URL. The first sync starts at once (\`last_run\`); \`schedule\` syncs it again hourly, daily or weekly.

The crawler is polite: it reads each origin's robots.txt for the user agent \`${CRAWLER_TOKEN}\` (its requests say
\`${CRAWLER_USER_AGENT}\`) and never fetches a disallowed page; between two fetches from one site it waits as long as
the site's last answer took, and at least the operator's CRAWL_HOST_DELAY_MS (except on origins the operator trusts)
or the site's \`Crawl-delay\` if longer, with at most CRAWL_HOST_CONCURRENCY at once. Every URL and
every redirect passes the same address rules as \`POST /ingest/url\` (422 \`url_refused\` for the start URL now; a
page refused later fails in its run), and the crawl never leaves the allowed origins. URLs are compared without
fragments, default ports, \`utm_\` and other tracking parameters, or a trailing slash, and a page's canonical link
names it: no page is fetched twice in a sync.

A sync asks again with \`If-None-Match\` and \`If-Modified-Since\`, then compares the content's SHA-256: an unchanged
page is neither parsed nor embedded again; a changed one becomes a new version of its document (the replace path of
\`replace_document_id\`). A page found gone (404, 410, or no longer linked within the limits) at two syncs in a row
is removed with its document. Its documents count against the creator's daily chunk quota (429 here when it is
used up; a sync that reaches it stops \`partial\`). ${ACCESS}`,
  request: { body: jsonBody(CreateSourceSchema) },
  responses: { 201: json(SourceSchema, 'The source, its first sync running') },
  errors: [...collectionErrors, 429],
});

const list = route.get('/sources', 'List sources', {
  operationId: 'listSources',
  access: 'ingest',
  description: `Newest first: a collection's (\`collection_id\`), the personal space's (\`personal\`), or without either every
source the caller may manage. A key restricted to a collection lists that collection's only. ${ACCESS}`,
  request: { query: SourceListQuery },
  responses: { 200: json(z.array(SourceSchema), 'Sources') },
  errors: [404],
});

const get = route.get('/sources/{id}', 'Read a source and its latest sync', {
  operationId: 'getSource',
  access: 'ingest',
  description: `While a sync runs, \`last_run.counts\` move as pages are fetched. ${ACCESS}`,
  request: { params: SourceParams },
  responses: { 200: json(SourceSchema, 'The source') },
  errors: [404],
});

const update = route.patch('/sources/{id}', 'Change a source’s schedule or limits, or pause it', {
  operationId: 'updateSource',
  access: 'ingest',
  description: `Any of the crawl's limits and patterns, \`schedule\` and \`paused\`. A new schedule (or a resumed source) counts
its next sync from now; a paused source is not synced on its schedule, though \`POST /sources/{id}/sync\` still syncs it.
The changes apply from the next sync. ${ACCESS}`,
  request: { params: SourceParams, body: jsonBody(UpdateSourceSchema) },
  responses: { 200: json(SourceSchema, 'The source as it is now') },
  errors: [404],
});

const remove = route.delete('/sources/{id}', 'Delete a source and its documents', {
  operationId: 'deleteSource',
  access: 'ingest',
  description: `Removes the source, its sync history, and every document it made, with their vectors and files: they stop
being listed or searched at once. A sync under way stops. After a failure part-way, what is left is finished by the
ingest worker's sweep. ${ACCESS}`,
  request: { params: SourceParams },
  responses: {
    200: json(
      z.object({ deleted: z.string(), documents_removed: z.number().int() }).openapi('DeletedWebSource'),
      'The deleted source, and how many documents went with it',
    ),
  },
  errors: [404, 502],
});

const sync = route.post('/sources/{id}/sync', 'Sync a source now', {
  operationId: 'syncSource',
  access: 'ingest',
  description: `Starts a sync (a paused source too). 409 while one is running; 429 when the creator's daily quota is used
up. Watch it at \`GET /sources/{id}\` or \`/runs\`, or register a webhook for \`source.synced\`. ${ACCESS}`,
  request: { params: SourceParams },
  responses: { 202: json(SourceRunSchema, 'The sync, started') },
  errors: [404, 409, 429],
});

const runs = route.get('/sources/{id}/runs', 'A source’s sync history', {
  operationId: 'listSourceRuns',
  access: 'ingest',
  description: `Every sync, newest first, with its counts and the pages that failed or were removed. ${ACCESS}`,
  request: { params: SourceParams, query: SourceRunsQuery },
  responses: { 200: json(z.array(SourceRunSchema), 'Runs') },
  errors: [404],
});

const pages = route.get('/sources/{id}/pages', 'A source’s pages', {
  operationId: 'listSourcePages',
  access: 'ingest',
  description: `Every page the source knows, by URL, with its document and when it was last fetched and last changed. ${ACCESS}`,
  request: { params: SourceParams, query: SourcePagesQuery },
  responses: { 200: json(z.array(SourcePageSchema), 'Pages') },
  errors: [404],
});

export function registerSourceRoutes(app: App) {
  app.openapi(create, async (c) => c.json(await c.var.services.sources.create(c.var.caller, c.req.valid('json')), 201));
  app.openapi(list, async (c) => {
    const { collection_id } = c.req.valid('query');
    const place = collection_id === 'personal' ? null : collection_id || undefined;
    return c.json(await c.var.services.sources.list(c.var.caller, place), 200);
  });
  app.openapi(get, async (c) => c.json(await c.var.services.sources.get(c.var.caller, c.req.valid('param').id), 200));
  app.openapi(update, async (c) =>
    c.json(await c.var.services.sources.update(c.var.caller, c.req.valid('param').id, c.req.valid('json')), 200),
  );
  app.openapi(remove, async (c) => c.json(await c.var.services.sources.remove(c.var.caller, c.req.valid('param').id), 200));
  app.openapi(sync, async (c) => c.json(await c.var.services.sources.sync(c.var.caller, c.req.valid('param').id), 202));
  app.openapi(runs, async (c) =>
    c.json(await c.var.services.sources.runs(c.var.caller, c.req.valid('param').id, c.req.valid('query')), 200),
  );
  app.openapi(pages, async (c) =>
    c.json(await c.var.services.sources.pages(c.var.caller, c.req.valid('param').id, c.req.valid('query')), 200),
  );
}
