import { z } from '@hono/zod-openapi';
import { MAX_DOCUMENT_BYTES } from '#core/limits.ts';
import type { App } from '../context.ts';
import { DeletedSchema, DocumentSchema, PersonalDocumentParams } from '../schemas/collections.ts';
import { json, jsonBody } from '../schemas/common.ts';
import { collectionErrors } from '../schemas/error.ts';
import { IngestQuery, JobCreatedSchema, JobParams, JobSchema, UploadSchema, UrlIngestSchema } from '../schemas/ingest.ts';
import { uploadTooLarge } from '../services/ingest.ts';
import { openFilePart } from '../uploads/multipart.ts';
import { taggedRoutes } from './define-route.ts';

const route = taggedRoutes('Ingestion');

const upload = route.post('/ingest', 'Upload a file for ingestion', {
  description: `Returns at once with a job id; poll \`GET /ingest/jobs/{job_id}\`. Owner, or a member holding \`ingest\`.
The type is decided by the extension and by the content (magic bytes, the OOXML content types, valid text);
a mismatch or another type is 415. More than 50 MB is 413, counted while the body streams in.
Without \`collection_id\` the document goes to the caller's personal namespace, searched by a query with an empty \`collection_id\`.`,
  request: {
    query: IngestQuery,
    body: { required: true, content: { 'multipart/form-data': { schema: UploadSchema } } },
  },
  responses: { 200: json(JobCreatedSchema, 'The job was queued') },
  errors: [...collectionErrors, 413, 415, 502],
});

const ingestUrl = route.post('/ingest/url', 'Ingest a public web page or file by URL', {
  description: `http or https on ports 80/443, no credentials, and a host that resolves only to public addresses;
otherwise 422. Redirects are re-checked on every hop when the worker fetches. HTML is reduced to its main text;
a URL serving a PDF or another supported type is parsed as that type.`,
  request: { body: jsonBody(UrlIngestSchema) },
  responses: { 200: json(JobCreatedSchema, 'The job was queued') },
  errors: collectionErrors,
});

const personalDocuments = route.get('/ingest/documents', 'List the caller’s personal documents', {
  description:
    'Documents ingested without a `collection_id` (the personal namespace). Same fields as a collection’s documents; only their owner sees them.',
  responses: { 200: json(z.array(DocumentSchema), 'Documents') },
});

const deletePersonalDocument = route.delete('/ingest/documents/{document_id}', 'Delete one of the caller’s personal documents', {
  description: 'Removes its vectors, stored files and rows. Anyone else’s document is 404.',
  request: { params: PersonalDocumentParams },
  responses: { 200: json(DeletedSchema, 'The deleted id') },
  errors: [404, 502],
});

const getJob = route.get('/ingest/jobs/{job_id}', 'Read an ingest job (its creator only)', {
  description:
    'Status goes `queued` → `processing` → `succeeded`, `partial` or `failed`. `chunks_processed` advances against `chunks_total` while it runs.',
  request: { params: JobParams },
  responses: { 200: json(JobSchema, 'The job') },
  errors: [404],
});

// Room for the multipart framing around a file of the maximum size.
const MAX_BODY_BYTES = MAX_DOCUMENT_BYTES + 64 * 1024;

export function registerIngestRoutes(app: App) {
  // Documented in OpenAPI but not validated by it: that would buffer a 50 MB body.
  app.openAPIRegistry.registerPath(upload);
  app.post(upload.path, async (c) => {
    const declared = Number(c.req.header('content-length') ?? 0);
    if (declared > MAX_BODY_BYTES) throw uploadTooLarge();
    const file = await openFilePart(c.req.raw);
    try {
      const jobId = await c.var.services.ingest.uploadFile(c.var.caller, c.req.query('collection_id') || undefined, file);
      return c.json({ job_id: jobId }, 200);
    } finally {
      await file.settle();
    }
  });
  app.openapi(ingestUrl, async (c) => {
    const { url, collection_id } = c.req.valid('json');
    return c.json({ job_id: await c.var.services.ingest.ingestUrl(c.var.caller, collection_id || undefined, url) }, 200);
  });
  app.openapi(personalDocuments, async (c) => c.json(await c.var.services.documents.listPersonal(c.var.caller), 200));
  app.openapi(deletePersonalDocument, async (c) => {
    const deleted = await c.var.services.documents.deletePersonal(c.var.caller, c.req.valid('param').document_id);
    return c.json({ deleted }, 200);
  });
  app.openapi(getJob, async (c) => c.json(await c.var.services.ingest.getJob(c.var.caller, c.req.valid('param').job_id), 200));
}
