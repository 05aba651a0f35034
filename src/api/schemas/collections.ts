import { z } from '@hono/zod-openapi';
import { MAX_CHUNK_SIZE, MAX_PASSAGES_AROUND, MIN_CHUNK_SIZE } from '#core/limits.ts';
import { DEFAULT_CONFIG, RETRIEVAL_STRATEGIES } from '#retrieval/config.ts';
import { MAX_RERANK_CANDIDATES } from '#retrieval/rerank.ts';
import { SourceSchema } from './chat.ts';
import { CollectionParams, Id, optionalPageQuery, Permission, pathParam, Timestamp, text } from './common.ts';
import { FilterQueryParam, MetadataSchema } from './metadata.ts';

export const RetrievalConfigSchema = z
  .object({
    chunk_size: z
      .number()
      .int()
      .min(MIN_CHUNK_SIZE)
      .max(MAX_CHUNK_SIZE)
      .openapi({ description: 'Characters per chunk', example: 1000 }),
    retrieval_strategy: z.enum(RETRIEVAL_STRATEGIES).openapi({
      description:
        'similarity: the top_k best. mmr: maximal marginal relevance (λ 0.5), trading some relevance for variety. ' +
        'threshold: only passages that match well enough, so possibly fewer than top_k or none: a dense score of at ' +
        "least cosine 0.3, or 0.64 with the BGE v1.5 embedding models (the devstack's bge-small-en-v1.5), whose " +
        'unrelated text scores higher; a BM25 score of at least 1; in a hybrid search, either.',
      example: 'similarity',
    }),
    rerank: z
      .boolean()
      .optional()
      .openapi({
        description:
          'Rerank the best fused candidates with the reranking model (RERANK_MODEL) before the strategy (MMR, the threshold) ' +
          `applies; a request's \`rerank\` overrides it. Default ${DEFAULT_CONFIG.rerank}: on the measured sets the shipped ` +
          'cross-encoder did not rank better than fusion (README, "Reranking").',
        example: false,
      }),
    rerank_candidates: z
      .number()
      .int()
      .min(1)
      .max(MAX_RERANK_CANDIDATES)
      .optional()
      .openapi({
        description:
          `How many of the best fused candidates are reranked, 1–${MAX_RERANK_CANDIDATES} (default ${DEFAULT_CONFIG.rerank_candidates}); ` +
          'each costs reranking time. When it exceeds top_k the reranker can bring a passage up from below the top_k.',
        example: DEFAULT_CONFIG.rerank_candidates,
      }),
  })
  .strict()
  .openapi('RetrievalConfig', {
    description: `The stored config merged over the defaults (1000, \`similarity\`, rerank ${DEFAULT_CONFIG.rerank}, ${DEFAULT_CONFIG.rerank_candidates} candidates).`,
  });

export const CollectionSchema = z
  .object({
    id: Id.openapi({ description: 'Also the vector namespace name' }),
    name: z.string(),
    config: z.record(z.string(), z.unknown()).openapi({ description: 'Stored retrieval config (may be partial)' }),
    user_id: Id.openapi({ description: 'Owner' }),
    created_at: Timestamp,
  })
  .openapi('Collection');

export const ListedCollectionSchema = CollectionSchema.extend({
  shared: z.literal(true).optional().openapi({ description: 'Present on collections shared with the caller' }),
  permission: Permission.optional().openapi({ description: 'The caller’s permission on a shared collection' }),
}).openapi('ListedCollection');

export const CreateCollectionSchema = z
  .object({ name: text({ min: 1, max: 200 }).openapi({ example: 'Research papers' }) })
  .openapi('CreateCollection');

export const DocumentSchema = z
  .object({
    id: Id,
    name: z.string().openapi({ description: 'File name, or the URL for web pages' }),
    source_kind: z.enum(['upload', 'url']),
    content_type: z.string().openapi({ example: 'application/pdf' }),
    size_bytes: z.number().int().openapi({ description: 'Bytes uploaded or fetched' }),
    chunk_count: z.number().int().openapi({ description: 'Chunks indexed (text and image descriptions)' }),
    created_at: Timestamp,
    open_url: z
      .string()
      .nullable()
      .openapi({ description: 'A signed URL valid for 1 hour for uploads; the original URL for web pages. Fetch on demand.' }),
    type: z.string().nullable().openapi({
      description: 'How it is parsed (`pdf`, `docx`, … `html`); null while a web page is not fetched yet',
      example: 'pdf',
    }),
    metadata: MetadataSchema,
    title: z
      .string()
      .nullable()
      .openapi({
        description:
          'The title its passages are indexed under: the file’s own (PDF Info, Office core properties, HTML `<title>`), ' +
          'else its first heading; null while it is being read, or when it has neither (its name stands in)',
        example: 'Quarterly report for the period ended June 25, 2022',
      }),
    document_date: z.string().nullable().openapi({
      description: 'The file’s own date, YYYY-MM-DD (PDF CreationDate, Office dcterms:created); null when it carries none',
      example: '2022-07-29',
    }),
    source_id: Id.nullable().openapi({
      description: 'The source (`/sources`) whose sync made it; null for uploads and single URLs',
    }),
    last_fetched_at: Timestamp.nullable().openapi({ description: 'A source’s page: when its sync last fetched it' }),
    last_changed_at: Timestamp.nullable().openapi({ description: 'A source’s page: when its sync last found it changed' }),
  })
  .openapi('Document');

export const DocumentPatchSchema = z
  .object({
    metadata: MetadataSchema.openapi({
      description: 'Replaces the document’s metadata whole (`{}` removes it); every chunk’s vector follows.',
    }),
  })
  .strict()
  .openapi('DocumentPatch');

export const DeletedSchema = z.object({ deleted: z.string() }).openapi('Deleted');

const documentId = pathParam('document_id', 'Document id');
export const DocumentParams = CollectionParams.extend({ document_id: documentId });
export const PersonalDocumentParams = z.object({ document_id: documentId });

const chunkIndex = z.coerce
  .number()
  .int()
  .min(0)
  .openapi({ param: { name: 'chunk_index', in: 'path' }, type: 'integer', minimum: 0, description: 'A source’s `chunk_index`' });
export const PassageParams = DocumentParams.extend({ chunk_index: chunkIndex });
export const PersonalPassageParams = PersonalDocumentParams.extend({ chunk_index: chunkIndex });
export const PassageQuery = z.object({
  around: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_PASSAGES_AROUND)
    .default(2)
    .openapi({
      param: { name: 'around', in: 'query' },
      type: 'integer',
      minimum: 0,
      maximum: MAX_PASSAGES_AROUND,
      default: 2,
      description: `Neighbours on each side, 0–${MAX_PASSAGES_AROUND} (default 2)`,
    }),
});

export const ShownPassageSchema = z
  .object({
    chunk_index: z.number().int(),
    chunk_type: z.enum(['text', 'image_description']),
    text: z.string().openapi({ description: 'The passage as a source shows it (an image’s description for a figure)' }),
    page: SourceSchema.shape.page,
    heading: SourceSchema.shape.heading,
    image_url: z.string().nullable().openapi({ description: 'A signed link (1 hour) to the figure or scanned page' }),
  })
  .openapi('ShownPassage');

export const PassageWindowSchema = z
  .object({
    document: DocumentSchema,
    chunk_index: z.number().int().openapi({ description: 'The cited passage, one of `passages`' }),
    passages: z.array(ShownPassageSchema).openapi({
      description:
        'The cited passage and its indexed neighbours, in document order; fewer at the document’s ends. A PDF ' +
        'source’s `document.open_url` and `page` open it at the page.',
    }),
  })
  .openapi('PassageWindow');

export const DocumentListQuery = z.object({ ...optionalPageQuery(), filter: FilterQueryParam.optional() });
export const DocumentFilterQuery = z.object({ filter: FilterQueryParam.optional() });
