import type { Adapters } from '#core/adapters/index.ts';
import type { ModelUsage } from '#core/adapters/models.ts';
import type { Caller } from '#core/caller.ts';
import type { DocumentRepo } from '#core/db/documents.ts';
import { fuseAcross, type NamespaceLists } from './across-namespaces.ts';
import type { RetrievalStrategy } from './config.ts';
import { searchQuery, type Turn } from './conversation.ts';
import { type FilterNode, toUpstashFilter } from './filter.ts';
import { convexFuse, distributionFuse, type Fusion } from './fusion.ts';
import { queryEmbeddingText } from './query-instruction.ts';
import { chooseAfterRerank, DEFAULT_RERANK_BUDGET_MS, type RerankOutcome, rerankCandidates, rerankRequestFor } from './rerank.ts';
import { collectionOf, type RetrievalScope, resolveScope, type SearchAccess } from './scopes.ts';
import type { SparseVector } from './sparse.ts';
import {
  type Candidate,
  candidatePoolSize,
  DEFAULT_MMR_LAMBDA,
  type Evidence,
  type QueryMode,
  type Strategy,
} from './strategies.ts';
import { locationOf, type PassageLocation } from './vector-metadata.ts';

export type { RetrievalScope, SearchAccess } from './scopes.ts';

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
  /** The reranker's score in (0, 1); null when the passage was not reranked. */
  rerankScore: number | null;
  /** The collection it was found in; null for the personal space. */
  collectionId: string | null;
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
  rerank_score: passage.rerankScore,
  collection_id: passage.collectionId,
});

/** A source as chat history stored it; answers recorded before a field existed get it as unknown (null). */
export const storedSource = (stored: unknown) => ({
  document_id: null,
  page: null,
  heading: null,
  rerank_score: null,
  collection_id: null,
  ...(stored as Record<string, unknown>),
});

export interface Retrieval {
  passages: RetrievedPassage[];
  embeddingLatencyMs: number;
  retrievalLatencyMs: number;
  /** Whether the candidates were reranked, or why not; its time is not in retrievalLatencyMs. */
  rerank: RerankOutcome;
  strategy: RetrievalStrategy;
  topK: number;
  /** The question's embedding and reranking calls, as their providers reported them. */
  usage: ModelUsage[];
}

export interface RetrievalDeps extends Pick<Adapters, 'vectors' | 'models' | 'store'> {
  access: SearchAccess;
  documents: DocumentRepo;
  fusion: Fusion;
  /** Put before each question when it is embedded (query-instruction.ts); passages are embedded bare. */
  queryPrefix?: string;
  /** How long a question waits for the reranker (rerank.ts); DEFAULT_RERANK_BUDGET_MS when unset. */
  rerankBudgetMs?: number;
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
    options: { includeVectors: boolean; evidence: boolean; filter?: string },
  ): Promise<{ found: Candidate[]; mode: QueryMode; evidence?: Evidence }> {
    const base = baseRequest(query, pool, options);
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

  /** What every query of a question sends, whichever list it asks for. */
  function baseRequest(query: { sparse: SparseVector }, pool: number, options: { includeVectors: boolean; filter?: string }) {
    return {
      sparseVector: query.sparse,
      topK: pool,
      includeVectors: options.includeVectors,
      ...(options.filter ? { filter: options.filter } : {}),
    };
  }

  /**
   * The candidates from every namespace of the scope: one namespace's as `candidates` gives them;
   * several's from each list alone in each namespace, all at once, fused across them (across-namespaces.ts).
   */
  async function candidatesIn(
    namespaces: readonly string[],
    query: { vector?: number[]; sparse: SparseVector },
    pool: number,
    options: { includeVectors: boolean; evidence: boolean; filter?: string },
  ): Promise<{ found: Candidate[]; mode: QueryMode; evidence?: Evidence }> {
    const [only] = namespaces;
    if (only !== undefined && namespaces.length === 1) return candidates(only, query, pool, options);
    const base = baseRequest(query, pool, options);
    const withVector = query.vector ? { ...base, vector: query.vector } : undefined;
    const lists = await Promise.all(
      namespaces.map(async (namespace): Promise<NamespaceLists> => {
        if (!withVector) return { namespace, sparse: await vectors.query(namespace, base) };
        const [dense, sparse] = await Promise.all([
          vectors.query(namespace, { ...withVector, mode: 'dense' }),
          fusion.kind === 'dense' ? undefined : vectors.query(namespace, { ...withVector, mode: 'sparse' }),
        ]);
        return { namespace, dense, sparse };
      }),
    );
    return fuseAcross(lists, fusion, pool);
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

  /** The collections' namespaces and strategy (owner or member of each), or, for none, the caller's personal space. */
  const scope = (caller: Caller, collectionIds: readonly string[]) => resolveScope(access, caller, collectionIds);

  /**
   * Embeds the question (when a model is configured), queries the namespace and applies the
   * strategy. Earlier turns of a conversation make a follow-up standalone (conversation.ts).
   */
  async function search(
    scope: RetrievalScope,
    input: { question: string; topK: number; turns?: readonly Turn[]; rerank?: boolean; filter?: FilterNode },
  ): Promise<Retrieval> {
    const { strategy } = scope;
    const plan = strategyFor(strategy, deps.denseCutoff);
    const query = searchQuery(input.question, input.turns ?? []);

    const embeddingStarted = performance.now();
    const embedded = queryEmbeddingText(deps.queryPrefix ?? '', query.text);
    const usage: ModelUsage[] = [];
    const onUsage = (u: ModelUsage) => usage.push(u);
    const vector = dense && models.embed ? (await models.embed([embedded], onUsage))[0] : undefined;
    const embeddingMs = performance.now() - embeddingStarted;

    const reranking = rerankRequestFor(scope.collections, input.rerank);
    const retrievalStarted = performance.now();
    const { found, mode, evidence } = await withoutDeleted(
      await candidatesIn(
        scope.namespaces.map((n) => n.namespace),
        { vector, sparse: query.sparse },
        Math.max(candidatePoolSize(plan, input.topK), reranking.enabled ? reranking.candidates : 0),
        {
          includeVectors: plan.kind === 'mmr',
          evidence: plan.kind === 'threshold',
          // Every list of every namespace is filtered by the index itself, before its topK.
          filter: input.filter && toUpstashFilter(input.filter),
        },
      ),
    );
    const denseWeight = 'alpha' in fusion ? fusion.alpha : undefined;
    const reranked = await rerankCandidates(models.rerank, query.text, found, reranking, {
      budgetMs: deps.rerankBudgetMs ?? DEFAULT_RERANK_BUDGET_MS,
      onUsage,
    });
    const chosen = chooseAfterRerank(found, reranked, plan, input.topK, mode, { denseWeight, evidence });
    const imagePaths = chosen.flatMap((c) => (typeof c.metadata.image_path === 'string' ? [c.metadata.image_path] : []));
    const imageUrls = await store.signedUrls(imagePaths, IMAGE_URL_SECONDS);
    const retrievalMs = performance.now() - retrievalStarted - (reranked.outcome.latencyMs ?? 0);

    return {
      passages: chosen.map((c) => ({
        documentName: String(c.metadata.source ?? ''),
        chunkIndex: Number(c.metadata.chunk_index ?? 0),
        text: String(c.metadata.text ?? ''),
        score: c.score,
        chunkType: c.metadata.chunk_type === 'image_description' ? 'image_description' : 'text',
        imageUrl: typeof c.metadata.image_path === 'string' ? (imageUrls.get(c.metadata.image_path) ?? null) : null,
        ...locationOf(c.metadata),
        rerankScore: reranked.scores.get(c.id) ?? null,
        collectionId: collectionOf(scope, c.namespace),
      })),
      embeddingLatencyMs: Math.round(embeddingMs),
      retrievalLatencyMs: Math.round(retrievalMs),
      rerank: reranked.outcome,
      strategy,
      topK: input.topK,
      usage,
    };
  }

  return {
    scope,
    search,
    /** `collectionIds`: the collections to search, none for the caller's personal space. */
    async retrieve(
      caller: Caller,
      input: { question: string; collectionIds: readonly string[]; topK: number; rerank?: boolean; filter?: FilterNode },
    ): Promise<Retrieval> {
      return search(await scope(caller, input.collectionIds), input);
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
