import { z } from '@hono/zod-openapi';
import { Id, OptionalCollectionId, pathParam, plainText, Timestamp, text } from './common.ts';

export const IngestQuery = z.object({
  collection_id: plainText()
    .optional()
    .openapi({
      param: { name: 'collection_id', in: 'query' },
      description: 'Target collection. Omitted or empty: the caller’s personal namespace.',
    }),
});

export const UploadSchema = z
  .object({
    file: z
      .any()
      .openapi({ type: 'string', format: 'binary', description: 'PDF, DOCX, PPTX, XLSX, CSV, TXT or MD; at most 50 MB' }),
  })
  .openapi('Upload');

export const UrlIngestSchema = z
  .object({
    url: text({ min: 1, max: 2048 }).openapi({ example: 'https://en.wikipedia.org/wiki/Retrieval-augmented_generation' }),
    collection_id: OptionalCollectionId,
  })
  .openapi('UrlIngest');

export const JobCreatedSchema = z.object({ job_id: Id }).openapi('JobCreated');

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
    source: z.string().openapi({ description: 'File name or URL' }),
    status: z.enum(['queued', 'processing', 'succeeded', 'partial', 'failed']),
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
