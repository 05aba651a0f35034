import type { Adapters } from '#core/adapters/index.ts';
import type { Caller } from '#core/caller.ts';
import type { CollectionRow } from '#core/db/collections.ts';
import type { DocumentRepo } from '#core/db/documents.ts';
import { namespaceFor } from '#core/namespaces.ts';
import { DEFAULT_CONFIG, type RetrievalStrategy } from './config.ts';
import { searchQuery, type Turn } from './conversation.ts';
import { convexFuse, distributionFuse, type Fusion } from './fusion.ts';
import { queryEmbeddingText } from './query-instruction.ts';
import type { SparseVector } from './sparse.ts';
import {
  applyStrategy,
  type Candidate,
  candidatePoolSize,
  DEFAULT_MMR_LAMBDA,
  type Evidence,
  type QueryMode,
  type Strategy,
} from './strategies.ts';
import { locationOf, type PassageLocation } from './vector-metadata.ts';

/** Image links in passages are minted when the passage is read, and short-lived. */
const IMAGE_URL_SECONDS = 3600;

/** A retrieved chunk with what a reader needs to cite it. */
export interface RetrievedPassage extends PassageLocation {
  /** The document's name, or its URL for a web page. */
  documentName: string;
  chunkIndex: number;
  text: string;
  score: number;
  chunkType: 'text' | 'image_description';
  imageUrl: string | null;
}

/**
 * A passage as the API's `Source`: what clients receive, and what chat history stores
 * (jsonb) and returns as stored.
 */
export const passageJson = (passage: RetrievedPassage) => ({
  source: passage.documentName,
  chunk_index: passage.chunkIndex,
  text: passage.text,
  score: passage.score,
  chunk_type: passage.chunkType,
  image_url: passage.imageUrl,
  document_id: passage.documentId,
  page: passage.page,
  heading: passage.heading,
});

/** A source as chat history stored it; answers recorded before a field existed get it as unknown (null). */
export const storedSource = (stored: unknown) => ({
  document_id: null,
  page: null,
  heading: null,
  ...(stored as Record<string, unknown>),
});

/** Where a caller's question is searched: a collection's namespace and strategy, or their personal space. */
export interface RetrievalScope {
  namespace: string;
  strategy: RetrievalStrategy;
}

export interface Retrieval {
  passages: RetrievedPassage[];
  embeddingLatencyMs: number;
  retrievalLatencyMs: number;
  strategy: RetrievalStrategy;
  topK: number;
}

/** The access rules retrieval asks of the API (its access service): who may search where. */
export interface SearchAccess {
  /** The personal space: not for an API key restricted to one collection. */
  requireUnrestricted(caller: Caller): void;
  /** The owner or a member of the collection; 404 or 403 otherwise. */
  requireParticipant(caller: Caller, collectionId: string): Promise<{ collection: CollectionRow }>;
}

export interface RetrievalDeps extends Pick<Adapters, 'vectors' | 'models' | 'store'> {
  access: SearchAccess;
  documents: DocumentRepo;
  fusion: Fusion;
  /** Put before each question when it is embedded (query-instruction.ts); passages are embedded bare. */
  queryPrefix?: string;
  /** The threshold strategy's default cut-off for dense scores, the embedding model's (dense-cutoff.ts). */
  denseCutoff?: number;
}

export function createRetrievalService(deps: RetrievalDeps) {
  const { access, documents, vectors, models, store, fusion } = deps;
  // Without an embedding model there is nothing to fuse, or to search densely.
  const dense = models.embed !== null && fusion.kind !== 'sparse';

  /**
   * The candidates for a query, from one list, both fused by Upstash, or both fused here. `evidence`
   * also asks for each list alone (in parallel), which a fused query's default threshold is taken on.
   */
  async function candidates(
    namespace: string,
    query: { vector?: number[]; sparse: SparseVector },
    pool: number,
    options: { includeVectors: boolean; evidence: boolean },
  ): Promise<{ found: Candidate[]; mode: QueryMode; evidence?: Evidence }> {
    const base = { sparseVector: query.sparse, topK: pool, includeVectors: options.includeVectors };
    if (!query.vector) return { found: await vectors.query(namespace, base), mode: 'sparse' };
    const withVector = { ...base, vector: query.vector };
    if (fusion.kind === 'dense') {
      return { found: await vectors.query(namespace, { ...withVector, mode: 'dense' }), mode: 'dense' };
    }
    const single = () =>
      Promise.all([
        vectors.query(namespace, { ...withVector, mode: 'dense' }),
        vectors.query(namespace, { ...withVector, mode: 'sparse' }),
      ]).then(([dense, sparse]) => ({ dense, sparse }));
    if (fusion.kind === 'convex' || (fusion.kind === 'dbsf' && fusion.alpha !== undefined)) {
      const lists = await single();
      const fuse = fusion.kind === 'convex' ? convexFuse : distributionFuse;
      return { found: fuse(lists.dense, lists.sparse, fusion.alpha as number, pool), mode: 'convex', evidence: lists };
    }
    const fused =
      fusion.kind === 'dbsf'
        ? { mode: 'dbsf' as const, request: { ...withVector, fusion: 'DBSF' as const } }
        : { mode: 'hybrid' as const, request: withVector };
    const [found, evidence] = await Promise.all([
      vectors.query(namespace, fused.request),
      options.evidence ? single() : undefined,
    ]);
    return { found, mode: fused.mode, evidence };
  }

  /**
   * Leaves out the passages of documents being deleted or gone: a deletion marks its row before it removes
   * the vectors, and a vector an ingest step upserts during a deletion lives until that step takes it back.
   * A vector written before `document_id` existed is kept: it cannot be told.
   */
  async function withoutDeleted<P extends { found: Candidate[]; evidence?: Evidence }>(pool: P): Promise<P> {
    const { found, evidence } = pool;
    const all = [...found, ...(evidence?.dense ?? []), ...(evidence?.sparse ?? [])];
    const ids = new Set(all.flatMap((c) => (typeof c.metadata.document_id === 'string' ? [c.metadata.document_id] : [])));
    if (ids.size === 0) return pool;
    const live = await documents.live([...ids]);
    const kept = (c: Candidate) => typeof c.metadata.document_id !== 'string' || live.has(c.metadata.document_id.toLowerCase());
    return {
      ...pool,
      found: found.filter(kept),
      ...(evidence ? { evidence: { dense: evidence.dense.filter(kept), sparse: evidence.sparse.filter(kept) } } : {}),
    };
  }

  /** The collection's namespace and strategy (owner or member), or the caller's personal space. */
  async function scope(caller: Caller, collectionId: string | undefined): Promise<RetrievalScope> {
    if (!collectionId) {
      access.requireUnrestricted(caller);
      return { namespace: namespaceFor(null, caller.id), strategy: DEFAULT_CONFIG.retrieval_strategy };
    }
    const { collection } = await access.requireParticipant(caller, collectionId);
    const strategy = (collection.config.retrieval_strategy as RetrievalStrategy | undefined) ?? DEFAULT_CONFIG.retrieval_strategy;
    return { namespace: namespaceFor(collection.id, collection.user_id), strategy };
  }

  /**
   * Embeds the question (when a model is configured), queries the namespace and applies the
   * strategy. Earlier turns of a conversation make a follow-up standalone (conversation.ts).
   */
  async function search(
    { namespace, strategy }: RetrievalScope,
    input: { question: string; topK: number; turns?: readonly Turn[] },
  ): Promise<Retrieval> {
    const plan = strategyFor(strategy, deps.denseCutoff);
    const query = searchQuery(input.question, input.turns ?? []);

    const embeddingStarted = performance.now();
    const embedded = queryEmbeddingText(deps.queryPrefix ?? '', query.text);
    const vector = dense && models.embed ? (await models.embed([embedded]))[0] : undefined;
    const embeddingMs = performance.now() - embeddingStarted;

    const retrievalStarted = performance.now();
    const { found, mode, evidence } = await withoutDeleted(
      await candidates(namespace, { vector, sparse: query.sparse }, candidatePoolSize(plan, input.topK), {
        includeVectors: plan.kind === 'mmr',
        evidence: plan.kind === 'threshold',
      }),
    );
    const denseWeight = 'alpha' in fusion ? fusion.alpha : undefined;
    const chosen = applyStrategy(found, plan, input.topK, mode, { denseWeight, evidence });
    const imagePaths = chosen.flatMap((c) => (typeof c.metadata.image_path === 'string' ? [c.metadata.image_path] : []));
    const imageUrls = await store.signedUrls(imagePaths, IMAGE_URL_SECONDS);
    const retrievalMs = performance.now() - retrievalStarted;

    return {
      passages: chosen.map((c) => ({
        documentName: String(c.metadata.source ?? ''),
        chunkIndex: Number(c.metadata.chunk_index ?? 0),
        text: String(c.metadata.text ?? ''),
        score: c.score,
        chunkType: c.metadata.chunk_type === 'image_description' ? 'image_description' : 'text',
        imageUrl: typeof c.metadata.image_path === 'string' ? (imageUrls.get(c.metadata.image_path) ?? null) : null,
        ...locationOf(c.metadata),
      })),
      embeddingLatencyMs: Math.round(embeddingMs),
      retrievalLatencyMs: Math.round(retrievalMs),
      strategy,
      topK: input.topK,
    };
  }

  return {
    scope,
    search,
    async retrieve(caller: Caller, input: { question: string; collectionId?: string; topK: number }): Promise<Retrieval> {
      return search(await scope(caller, input.collectionId), input);
    },
  };
}

function strategyFor(strategy: RetrievalStrategy, denseCutoff?: number): Strategy {
  switch (strategy) {
    case 'mmr':
      return { kind: 'mmr', lambda: DEFAULT_MMR_LAMBDA };
    case 'threshold':
      // The default cut-off for the query mode: scores of dense, sparse and fused queries differ in scale.
      return { kind: 'threshold', minScore: null, denseCutoff };
    default:
      return { kind: 'similarity' };
  }
}

export type RetrievalService = ReturnType<typeof createRetrievalService>;
