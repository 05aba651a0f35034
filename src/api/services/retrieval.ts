import type { Models } from '#core/adapters/models.ts';
import type { ObjectStore } from '#core/adapters/storage.ts';
import type { VectorStore } from '#core/adapters/vectors.ts';
import { namespaceFor } from '#core/namespaces.ts';
import { encodeQuery } from '#core/retrieval/sparse.ts';
import type { Caller } from '../auth/caller.ts';
import type { AccessService } from './access.ts';
import { DEFAULT_CONFIG, type RetrievalStrategy } from './collections.ts';
import { applyStrategy, candidatePoolSize, DEFAULT_MMR_LAMBDA, type Strategy } from './retrieval-strategies.ts';

/** Image links in sources are minted when the source is read, and short-lived. */
const IMAGE_URL_SECONDS = 3600;

export interface Source {
  source: string;
  chunk_index: number;
  text: string;
  score: number;
  chunk_type: 'text' | 'image_description';
  image_url: string | null;
}

export interface Retrieval {
  sources: Source[];
  embedding_latency_ms: number;
  retrieval_latency_ms: number;
  strategy: RetrievalStrategy;
  top_k: number;
}

export function createQueryService(deps: { access: AccessService; vectors: VectorStore; models: Models; store: ObjectStore }) {
  const { access, vectors, models, store } = deps;

  /** The collection's namespace and strategy (owner or member), or the caller's personal space. */
  async function scope(caller: Caller, collectionId: string | undefined) {
    if (!collectionId) return { namespace: namespaceFor(null, caller.id), strategy: DEFAULT_CONFIG.retrieval_strategy };
    const { collection } = await access.requireParticipant(caller, collectionId);
    const strategy = (collection.config.retrieval_strategy as RetrievalStrategy | undefined) ?? DEFAULT_CONFIG.retrieval_strategy;
    return { namespace: namespaceFor(collection.id, collection.user_id), strategy };
  }

  return {
    /** Embeds the question (when a model is configured), queries the namespace and applies the strategy. */
    async retrieve(caller: Caller, input: { question: string; collectionId?: string; topK: number }): Promise<Retrieval> {
      const { namespace, strategy } = await scope(caller, input.collectionId);
      const plan = strategyFor(strategy);

      const embeddingStarted = performance.now();
      const vector = models.embed ? (await models.embed([input.question]))[0] : undefined;
      const embeddingMs = performance.now() - embeddingStarted;

      const retrievalStarted = performance.now();
      const candidates = await vectors.query(namespace, {
        vector,
        sparseVector: encodeQuery(input.question),
        topK: candidatePoolSize(plan, input.topK),
        includeVectors: plan.kind === 'mmr',
      });
      const chosen = applyStrategy(candidates, plan, input.topK, vector ? 'hybrid' : 'sparse');
      const imagePaths = chosen.flatMap((c) => (typeof c.metadata.image_path === 'string' ? [c.metadata.image_path] : []));
      const imageUrls = await store.signedUrls(imagePaths, IMAGE_URL_SECONDS);
      const retrievalMs = performance.now() - retrievalStarted;

      return {
        sources: chosen.map((c) => ({
          source: String(c.metadata.source ?? ''),
          chunk_index: Number(c.metadata.chunk_index ?? 0),
          text: String(c.metadata.text ?? ''),
          score: c.score,
          chunk_type: c.metadata.chunk_type === 'image_description' ? 'image_description' : 'text',
          image_url: typeof c.metadata.image_path === 'string' ? (imageUrls.get(c.metadata.image_path) ?? null) : null,
        })),
        embedding_latency_ms: Math.round(embeddingMs),
        retrieval_latency_ms: Math.round(retrievalMs),
        strategy,
        top_k: input.topK,
      };
    },
  };
}

function strategyFor(strategy: RetrievalStrategy): Strategy {
  switch (strategy) {
    case 'mmr':
      return { kind: 'mmr', lambda: DEFAULT_MMR_LAMBDA };
    case 'threshold':
      // The default cut-off for the query mode: scores of dense, sparse and fused queries differ in scale.
      return { kind: 'threshold', minScore: null };
    default:
      return { kind: 'similarity' };
  }
}

export type QueryService = ReturnType<typeof createQueryService>;
