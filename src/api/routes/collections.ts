import { z } from '@hono/zod-openapi';
import type { App } from '../context.ts';
import {
  CollectionSchema,
  CreateCollectionSchema,
  DeletedSchema,
  DocumentListQuery,
  DocumentParams,
  DocumentPatchSchema,
  DocumentSchema,
  ListedCollectionSchema,
  PassageParams,
  PassageQuery,
  PassageWindowSchema,
  RetrievalConfigSchema,
} from '../schemas/collections.ts';
import { CollectionParams, json, jsonBody } from '../schemas/common.ts';
import { collectionErrors } from '../schemas/error.ts';
import { RechunkSchema } from '../schemas/ingest.ts';
import { checkedFilter } from '../schemas/metadata.ts';
import { taggedRoutes } from './define-route.ts';

const route = taggedRoutes('Collections');
const params = CollectionParams;

const create = route.post('/collections', 'Create a collection', {
  operationId: 'createCollection',
  access: 'collections:write',
  request: { body: jsonBody(CreateCollectionSchema) },
  responses: { 200: json(CollectionSchema, 'The created collection') },
});

const list = route.get('/collections', 'List owned and shared collections', {
  operationId: 'listCollections',
  access: 'collections:read',
  description: 'Newest first. Collections shared with the caller carry `shared: true` and `permission`.',
  responses: { 200: json(z.array(ListedCollectionSchema), 'Collections') },
});

const remove = route.delete('/collections/{id}', 'Delete a collection (owner only)', {
  operationId: 'deleteCollection',
  access: 'collections:write',
  description: `Marks the collection as being deleted, so that from then on it is 404 to every request but this one and is
no longer listed; then purges its vector namespace and every stored file, and cascades to documents, shares, memberships,
chat sessions and messages. After a failure part-way (502), the same DELETE finishes the job (so does the ingest worker's
cron sweep, later).`,
  request: { params },
  responses: { 200: json(DeletedSchema, 'The deleted id') },
  errors: [...collectionErrors, 502],
});

const getConfig = route.get('/collections/{id}/config', 'Read the retrieval config (admin only)', {
  operationId: 'getCollectionConfig',
  access: 'bearer',
  request: { params },
  responses: { 200: json(RetrievalConfigSchema, 'Stored config merged over defaults') },
  errors: collectionErrors,
});

const putConfig = route.put('/collections/{id}/config', 'Replace the retrieval config (admin only)', {
  operationId: 'putCollectionConfig',
  access: 'bearer',
  description:
    'Both fields are required. A new `chunk_size` applies to documents ingested afterwards; `POST /collections/{id}/rechunk` cuts the earlier ones again.',
  request: { params, body: jsonBody(RetrievalConfigSchema) },
  responses: { 200: json(RetrievalConfigSchema, 'The stored config') },
  errors: collectionErrors,
});

const rechunk = route.post('/collections/{id}/rechunk', 'Re-chunk documents at the current chunk_size (admin only)', {
  operationId: 'rechunkCollection',
  access: 'bearer',
  description: `For each document cut at another \`chunk_size\` than the collection's current one, or indexed before each
passage was indexed with its document's title and date, ingests its stored original again as a new document, with a job the caller polls at \`GET /ingest/jobs/{job_id}\`. The old document stays searchable
until the new one is indexed (succeeded or partial), then is deleted with its vectors and files; if the job fails, the old
document stays as it was. While a job runs, the collection's document list shows both. Documents still being ingested or
re-chunked are skipped, so a second call starts only what the first did not. Not counted against the daily chunk quota.`,
  request: { params },
  responses: { 200: json(RechunkSchema, 'The jobs started') },
  errors: [...collectionErrors, 502, 503],
});

const documents = route.get('/collections/{id}/documents', 'List documents (owner or member)', {
  operationId: 'listDocuments',
  access: 'collections:read',
  description:
    'Newest first. Documents still being ingested are listed with the chunks indexed so far. With `limit` and ' +
    '`offset`, a page of the list; without them, the whole list. With `filter` (the language of `POST /query/search`, ' +
    'as JSON text), only the documents it selects, with the same meaning as in a search.',
  request: { params, query: DocumentListQuery },
  responses: { 200: json(z.array(DocumentSchema), 'Documents') },
  errors: collectionErrors,
});

const passages = route.get(
  '/collections/{id}/documents/{document_id}/passages/{chunk_index}',
  'A cited passage with its neighbours (owner or member)',
  {
    operationId: 'getPassages',
    access: 'query',
    description: `What a citation opens: the source's chunk (\`document_id\` and \`chunk_index\` of a source) with up to
\`around\` indexed chunks on each side, in document order, and the document with its signed \`open_url\`. The same
access as search: the collection's owner and members, and a key with the \`query\` scope restricted to it or not. A
document not in the collection, being deleted, or a chunk that is not indexed (yet, or any more: a re-chunk gives a
document new chunks) is 404.`,
    request: { params: PassageParams, query: PassageQuery },
    responses: { 200: json(PassageWindowSchema, 'The passage and its neighbours') },
    errors: collectionErrors,
  },
);

const patchDocument = route.patch('/collections/{id}/documents/{document_id}', 'Replace a document’s metadata (owner only)', {
  operationId: 'patchDocument',
  access: 'ingest',
  description: `Replaces the document's \`metadata\` whole, then rewrites every one of its chunks' vectors with it, so that
search filters see the change as soon as this answers. A document still being ingested or replaced is 409; one being
deleted is 404. After a failure part-way (502) the document already holds the new metadata and some vectors the old:
the same PATCH finishes the job. Also gives vectors indexed before filters existed their type and upload date.`,
  request: { params: DocumentParams, body: jsonBody(DocumentPatchSchema) },
  responses: { 200: json(DocumentSchema, 'The document as now stored') },
  errors: [...collectionErrors, 409, 502],
});

const removeDocument = route.delete('/collections/{id}/documents/{document_id}', 'Delete a document (owner only)', {
  operationId: 'deleteDocument',
  access: 'ingest',
  description: `Marks the document as being deleted, so that from then on it is neither listed nor searched; then removes its
vectors (found through its chunk records), its original and figures from storage, and its rows. After a failure part-way
(502), the same DELETE finishes the job (so does the ingest worker's cron sweep, later).`,
  request: { params: DocumentParams },
  responses: { 200: json(DeletedSchema, 'The deleted id') },
  errors: [...collectionErrors, 502],
});

export function registerCollectionRoutes(app: App) {
  app.openapi(create, async (c) => {
    const { name } = c.req.valid('json');
    return c.json(await c.var.services.collections.create(c.var.caller, name), 200);
  });
  app.openapi(list, async (c) => c.json(await c.var.services.collections.list(c.var.caller), 200));
  app.openapi(remove, async (c) => {
    const deleted = await c.var.services.collections.delete(c.var.caller, c.req.valid('param').id);
    return c.json({ deleted }, 200);
  });
  app.openapi(getConfig, async (c) =>
    c.json(await c.var.services.collections.getConfig(c.var.caller, c.req.valid('param').id), 200),
  );
  app.openapi(putConfig, async (c) => {
    const config = await c.var.services.collections.putConfig(c.var.caller, c.req.valid('param').id, c.req.valid('json'));
    return c.json(config, 200);
  });
  app.openapi(rechunk, async (c) =>
    c.json({ jobs: await c.var.services.ingest.rechunk(c.var.caller, c.req.valid('param').id) }, 200),
  );
  app.openapi(documents, async (c) => {
    const { limit, offset, filter } = c.req.valid('query');
    const page = limit === undefined && offset === undefined ? undefined : { limit: limit ?? null, offset: offset ?? 0 };
    const selected = filter === undefined ? undefined : checkedFilter(filter);
    return c.json(await c.var.services.documents.list(c.var.caller, c.req.valid('param').id, page, selected), 200);
  });
  app.openapi(passages, async (c) => {
    const { id, document_id, chunk_index } = c.req.valid('param');
    const { around } = c.req.valid('query');
    return c.json(await c.var.services.documents.passages(c.var.caller, id, document_id, chunk_index, around), 200);
  });
  app.openapi(patchDocument, async (c) => {
    const { id, document_id } = c.req.valid('param');
    const { metadata } = c.req.valid('json');
    return c.json(await c.var.services.documents.setMetadata(c.var.caller, id, document_id, metadata), 200);
  });
  app.openapi(removeDocument, async (c) => {
    const { id, document_id } = c.req.valid('param');
    return c.json({ deleted: await c.var.services.documents.delete(c.var.caller, id, document_id) }, 200);
  });
}
