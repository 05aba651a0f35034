import { z } from '@hono/zod-openapi';
import { JOB_STATUSES } from '#core/db/jobs.ts';
import { Id, OptionalCollectionId, pageQuery, pathParam, plainText, Timestamp, text } from './common.ts';
import { MetadataSchema } from './metadata.ts';

const JobStatusSchema = z.enum(JOB_STATUSES).openapi('JobStatus');

const replaceDocumentId = plainText().openapi({
  description:
    'A document of the same collection (or personal namespace) that this one is a new version of. It stays ' +
    'searchable while the new one is indexed; then it goes with its vectors, chunks and file, and the job ends ' +
    '(`succeeded` or `partial`). If the job fails or is cancelled, it stays as it was. Owner only; 404 if it is not ' +
    'there (or being deleted), 409 while it is still being ingested or replaced. An uploaded file whose bytes the ' +
    'namespace already holds (this document’s own, or another’s) is 409 too, and replaces nothing; a web page fetched ' +
    'again always replaces it.',
});

export const IngestQuery = z.object({
  collection_id: plainText()
    .optional()
    .openapi({
      param: { name: 'collection_id', in: 'query' },
      description: 'Target collection. Omitted or empty: the caller’s personal namespace.',
    }),
  replace_document_id: replaceDocumentId.optional().openapi({ param: { name: 'replace_document_id', in: 'query' } }),
});

export const UploadSchema = z
  .object({
    // Documentation only: the body is streamed, never parsed against this (src/api/routes/ingest.ts).
    metadata: z
      .string()
      .optional()
      .openapi({
        description:
          'The document’s metadata as JSON text (see `DocumentMetadata`), e.g. `{"company":"Acme","year":2025}`. It must come ' +
          'before `file` in the form: fields after the file are not read. A new version given none keeps the old one’s.',
      }),
    file: z.string().openapi({
      format: 'binary',
      description:
        'PDF, DOCX, PPTX, XLSX, ODT, ODS, ODP, EPUB, CSV, TXT, MD, HTML, JSON, JSONL, EML, PNG, JPEG or WebP, told by its content ' +
        '(the extension must agree); at most 50 MB. An image becomes one image chunk described by the vision model.',
    }),
  })
  .openapi('Upload');

export const UrlIngestSchema = z
  .object({
    url: text({ min: 1, max: 2048 }).openapi({ example: 'https://en.wikipedia.org/wiki/Retrieval-augmented_generation' }),
    collection_id: OptionalCollectionId,
    replace_document_id: replaceDocumentId.nullish(),
    metadata: MetadataSchema.optional().openapi({
      description: 'The document’s metadata (see `DocumentMetadata`); a new version given none keeps the old one’s.',
    }),
  })
  .openapi('UrlIngest');

export const JobCreatedSchema = z
  .object({
    job_id: Id.openapi({ description: 'Poll `GET /ingest/jobs/{job_id}`, or register a webhook' }),
    document_id: Id.openapi({ description: 'The document the job makes, or the one that already holds these bytes' }),
    duplicate: z.boolean().openapi({
      description:
        'True when the namespace already holds a document with the same bytes: no second document is made. ' +
        '`document_id` is that document, and `job_id` either the caller’s own job still at work on it or a new job ' +
        'that ended at once as the job that made the document ended.',
    }),
  })
  .openapi('JobCreated');

export const RechunkSchema = z
  .object({
    jobs: z
      .array(
        z.object({
          job_id: Id,
          document_id: Id.openapi({ description: 'The document being replaced' }),
          source: z.string().openapi({ description: 'File name or URL' }),
        }),
      )
      .openapi({ description: 'One job per document re-chunked now; empty when every document is already at the current size' }),
  })
  .openapi('Rechunk');

export const JobSchema = z
  .object({
    job_id: Id,
    collection_id: z.string().nullable().openapi({ description: 'Null for the personal namespace' }),
    document_id: Id.nullable().openapi({
      description: 'The document the job makes; null once a failed or cancelled job’s document has been removed',
    }),
    replaces_document_id: Id.nullable().openapi({
      description: 'For a new version: the document it replaces once indexed; null otherwise, and once replaced',
    }),
    source: z.string().openapi({ description: 'File name or URL' }),
    status: JobStatusSchema,
    chunks_processed: z.number().int(),
    chunks_total: z.number().int(),
    error_message: z
      .string()
      .nullable()
      .openapi({
        description:
          'Why the job failed, or what was lost when it is `partial`: fixed plain sentences, never an upstream’s or a ' +
          'library’s text. A URL whose host name cannot be looked up because the resolver is down is retried first; ' +
          'only a definite answer (no such host, a private address) or the last retry fails the job.',
      }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('IngestJob');

export const JobParams = z.object({ job_id: pathParam('job_id', 'Ingest job id') });

export const JobListQuery = z.object({
  collection_id: plainText()
    .optional()
    .openapi({
      param: { name: 'collection_id', in: 'query' },
      description: 'Only this collection’s jobs; `personal` for the personal namespace’s. Omitted: all.',
    }),
  status: JobStatusSchema.optional().openapi({ param: { name: 'status', in: 'query' } }),
  ...pageQuery(50),
});
