import { z } from '@hono/zod-openapi';
import type { App } from '../context.ts';
import {
  DeletedSchema,
  DocumentFilterQuery,
  DocumentPatchSchema,
  DocumentSchema,
  PassageQuery,
  PassageWindowSchema,
  PersonalDocumentParams,
  PersonalPassageParams,
} from '../schemas/collections.ts';
import { json, jsonBody } from '../schemas/common.ts';
import { collectionErrors } from '../schemas/error.ts';
import {
  IngestQuery,
  JobCreatedSchema,
  JobListQuery,
  JobParams,
  JobSchema,
  UploadSchema,
  UrlIngestSchema,
} from '../schemas/ingest.ts';
import { checkedFilter, parseMetadataField } from '../schemas/metadata.ts';
import { openFilePart } from '../uploads/multipart.ts';
import { taggedRoutes } from './define-route.ts';

const route = taggedRoutes('Ingestion');

const QUOTA = `Each user's documents may make 100,000 chunks per UTC day by default (the setting
\`INGEST_DAILY_CHUNKS_PER_USER\`), across all collections. Once today's are used up, new uploads and URLs are 429
\`quota_exceeded\` with \`Retry-After\` (seconds until 00:00 UTC). A document accepted earlier keeps the chunks that
fit and ends \`partial\`, or \`failed\` if none did, saying so. Deleting a document does not give its chunks back.`;

const DUPLICATES = `The same bytes make one document per namespace: uploading a file the collection (or the personal
namespace) already holds makes no second document and answers \`duplicate: true\` with that document's id. The
\`job_id\` is the caller's own job if it is still at work on those bytes; otherwise a new job, already ended as the
job that made the document ended (\`succeeded\` or \`partial\`, with that job's \`error_message\`), which fires its
webhooks like any ending. Someone else's job still at work on the same bytes is 409: try again once it has ended.`;

const upload = route.post('/ingest', 'Upload a file for ingestion', {
  operationId: 'uploadFile',
  access: 'ingest',
  description: `Returns at once with a job id; poll \`GET /ingest/jobs/{job_id}\`. Owner, or a member holding \`ingest\`.
The type is decided by the extension and by the content (magic bytes, the OOXML content types, an OpenDocument's
or EPUB's \`mimetype\` entry, valid text that parses as JSON, reads as HTML or starts with email headers): PDF, DOCX,
PPTX, XLSX, ODT, ODS, ODP, EPUB, CSV, TXT, MD, HTML, JSON, JSONL, EML, PNG, JPEG or WebP; a mismatch or another type is 415. More than 50 MB is 413, counted while the body streams in whatever
\`Content-Length\` says (chunked bodies too); a declared length over the limit is 413 before the body is read.
The permission (403) and the queue (503: ingestion disabled, or the queue unreachable when last asked) are checked
before the body is read. Form fields before \`file\` may hold 64 KB in all (more is 413: send \`file\` first);
a multipart boundary longer than 70 characters (RFC 2046) is 422. The document's name is the file's name without
its path and without control or invisible format characters (bidi overrides, isolates and marks, zero-width spaces).
Without \`collection_id\` the document goes to the caller's personal namespace, searched by a query with an empty \`collection_id\`.
${DUPLICATES}
With \`replace_document_id\` the file is a new version of that document (see the parameter).
A \`metadata\` field before \`file\` attaches metadata (JSON text, \`DocumentMetadata\`); past its limits, 422 naming
\`metadata\`, and nothing is stored.
${QUOTA}`,
  request: {
    query: IngestQuery,
    body: { required: true, content: { 'multipart/form-data': { schema: UploadSchema } } },
  },
  responses: { 200: json(JobCreatedSchema, 'The job was queued') },
  errors: [...collectionErrors, 409, 413, 415, 429, 502],
});

const ingestUrl = route.post('/ingest/url', 'Ingest a public web page or file by URL', {
  operationId: 'ingestUrl',
  access: 'ingest',
  description: `http or https on ports 80/443, no credentials, and a host that resolves only to public addresses;
otherwise 422. Redirects are re-checked on every hop when the worker fetches. HTML is reduced to its main text;
a URL serving a PDF or another supported type is parsed as that type.
${QUOTA}`,
  request: { body: jsonBody(UrlIngestSchema) },
  responses: { 200: json(JobCreatedSchema, 'The job was queued') },
  errors: [...collectionErrors, 409, 429],
});

const personalDocuments = route.get('/ingest/documents', 'List the caller’s personal documents', {
  operationId: 'listPersonalDocuments',
  access: 'collections:read',
  description:
    'Documents ingested without a `collection_id` (the personal namespace). Same fields as a collection’s documents; only their owner sees them. `filter` selects as in a collection’s list.',
  request: { query: DocumentFilterQuery },
  responses: { 200: json(z.array(DocumentSchema), 'Documents') },
});

const patchPersonalDocument = route.patch('/ingest/documents/{document_id}', 'Replace a personal document’s metadata', {
  operationId: 'patchPersonalDocument',
  access: 'ingest',
  description:
    'As `PATCH /collections/{id}/documents/{document_id}`, for a document of the caller’s personal namespace. Anyone else’s document is 404.',
  request: { params: PersonalDocumentParams, body: jsonBody(DocumentPatchSchema) },
  responses: { 200: json(DocumentSchema, 'The document as now stored') },
  errors: [404, 409, 502],
});

const personalPassages = route.get(
  '/ingest/documents/{document_id}/passages/{chunk_index}',
  'A cited passage of a personal document with its neighbours',
  {
    operationId: 'getPersonalPassages',
    access: 'query',
    description:
      'As `GET /collections/{id}/documents/{document_id}/passages/{chunk_index}`, for a document of the caller’s personal namespace. Anyone else’s document is 404; a key restricted to a collection is 403.',
    request: { params: PersonalPassageParams, query: PassageQuery },
    responses: { 200: json(PassageWindowSchema, 'The passage and its neighbours') },
    errors: [403, 404],
  },
);

const deletePersonalDocument = route.delete('/ingest/documents/{document_id}', 'Delete one of the caller’s personal documents', {
  operationId: 'deletePersonalDocument',
  access: 'ingest',
  description:
    'Marks it as being deleted (no longer listed or searched), then removes its vectors, stored files and rows; after a failure part-way (502), the same DELETE finishes the job. Anyone else’s document is 404.',
  request: { params: PersonalDocumentParams },
  responses: { 200: json(DeletedSchema, 'The deleted id') },
  errors: [404, 502],
});

const listJobs = route.get('/ingest/jobs', 'List the caller’s ingest jobs', {
  operationId: 'listJobs',
  access: 'ingest',
  description: `The caller's own jobs, newest first, optionally one collection's (\`collection_id\`, or \`personal\`) and
one status's. A key restricted to a collection lists that collection's jobs only (another \`collection_id\` is 403).`,
  request: { query: JobListQuery },
  responses: { 200: json(z.array(JobSchema), 'Jobs') },
});

const cancelJob = route.post('/ingest/jobs/{job_id}/cancel', 'Cancel an ingest job (its creator only)', {
  operationId: 'cancelJob',
  access: 'ingest',
  description: `The job ends \`failed\` with \`error_message\` "Cancelled" at once, so none of its steps does anything more,
and its webhooks fire (\`ingest.failed\`). Its document is removed with whatever was already indexed and stored; a
step that was running takes back what it writes afterwards. A document the job was to replace stays as it was.
Chunks already counted against the daily quota stay counted. Cancelling a cancelled job answers it again; a job that
ended otherwise is 409, and so is a new version already replacing the old document (it ends in a moment). Anyone
else's job is 404.`,
  request: { params: JobParams },
  responses: { 200: json(JobSchema, 'The cancelled job') },
  errors: [404, 409, 502],
});

const getJob = route.get('/ingest/jobs/{job_id}', 'Read an ingest job (its creator only)', {
  operationId: 'getJob',
  access: 'ingest',
  description: `Status goes \`queued\` → \`processing\` → \`succeeded\`, \`partial\` or \`failed\`. \`chunks_processed\` advances
against \`chunks_total\` while it runs. \`partial\` means part of the document was not read, and \`error_message\` says
which, among them a document past its budget: by default 16,000,000 characters of text (a repeated shared string or
table header counts each time), 20,000 chunks and 2,000 PDF pages, or too complex to read in full.`,
  request: { params: JobParams },
  responses: { 200: json(JobSchema, 'The job') },
  errors: [404],
});

export function registerIngestRoutes(app: App) {
  // Documented in OpenAPI but not validated by it: that would buffer a 50 MB body.
  app.openAPIRegistry.registerPath(upload);
  app.post(upload.path, upload.middleware, async (c) => {
    const collectionId = c.req.query('collection_id') || undefined;
    const replaces = c.req.query('replace_document_id') || undefined;
    // The metadata field precedes the file: a bad one is refused before anything is stored.
    const open = async () => {
      const part = await openFilePart(c.req.raw);
      try {
        return { ...part, metadata: parseMetadataField(part.fields.metadata) };
      } catch (error) {
        await part.settle();
        throw error;
      }
    };
    const accepted = await c.var.services.ingest.uploadFile(c.var.caller, collectionId, open, replaces);
    return c.json(accepted, 200);
  });
  app.openapi(ingestUrl, async (c) => {
    const { url, collection_id, replace_document_id, metadata } = c.req.valid('json');
    const accepted = await c.var.services.ingest.ingestUrl(
      c.var.caller,
      collection_id || undefined,
      url,
      replace_document_id || undefined,
      metadata,
    );
    return c.json(accepted, 200);
  });
  app.openapi(listJobs, async (c) => {
    const { collection_id, ...filter } = c.req.valid('query');
    const collectionId = collection_id === 'personal' ? null : collection_id || undefined;
    return c.json(await c.var.services.ingest.listJobs(c.var.caller, { ...filter, collectionId }), 200);
  });
  app.openapi(cancelJob, async (c) => c.json(await c.var.services.ingest.cancel(c.var.caller, c.req.valid('param').job_id), 200));
  app.openapi(personalDocuments, async (c) => {
    const { filter } = c.req.valid('query');
    const selected = filter === undefined ? undefined : checkedFilter(filter);
    return c.json(await c.var.services.documents.listPersonal(c.var.caller, selected), 200);
  });
  app.openapi(personalPassages, async (c) => {
    const { document_id, chunk_index } = c.req.valid('param');
    const { around } = c.req.valid('query');
    return c.json(await c.var.services.documents.personalPassages(c.var.caller, document_id, chunk_index, around), 200);
  });
  app.openapi(patchPersonalDocument, async (c) => {
    const { metadata } = c.req.valid('json');
    return c.json(
      await c.var.services.documents.setPersonalMetadata(c.var.caller, c.req.valid('param').document_id, metadata),
      200,
    );
  });
  app.openapi(deletePersonalDocument, async (c) => {
    const deleted = await c.var.services.documents.deletePersonal(c.var.caller, c.req.valid('param').document_id);
    return c.json({ deleted }, 200);
  });
  app.openapi(getJob, async (c) => c.json(await c.var.services.ingest.getJob(c.var.caller, c.req.valid('param').job_id), 200));
}
