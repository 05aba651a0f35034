import type { Models, UsageSink } from '#core/adapters/models.ts';
import { logUnowned } from '#core/log.ts';
import { DEFAULT_CONFIG } from './config.ts';
import { applyStrategy, type Candidate, type FusedContext, type QueryMode, type Strategy } from './strategies.ts';
import { locationOf } from './vector-metadata.ts';

/**
 * How long a question waits for the reranker before it goes on with the fused order. A hosted reranker
 * answers 30 passages in a few hundred milliseconds; the devstack's cross-encoder took 46–95 ms a
 * passage on two shared cores (docs/benchmarks.md, "Issue 22: reranking").
 */
export const DEFAULT_RERANK_BUDGET_MS = 2000;
/** A cross-encoder's time grows with each candidate; past this a question would wait seconds even on a hosted one. */
export const MAX_RERANK_CANDIDATES = 50;
/**
 * Word pieces of each passage the reranker reads: the query and a default 1000-character chunk fit whole, and
 * a cross-encoder's cost grows with the pair's length. Sent as Cohere's `max_tokens_per_doc`.
 */
export const RERANK_PASSAGE_TOKENS = 256;

/**
 * How the reranker's order is used. `replace`: its order is the order. `rrf`: its rank and the fused rank
 * are fused again by reciprocal rank (k = 60), so a passage both lists like comes first. Chosen by
 * measurement (docs/benchmarks.md, "Issue 22: reranking").
 */
export type RerankOrder = 'replace' | 'rrf';
export const RERANK_ORDER: RerankOrder = 'rrf';
const RRF_K = 60;

/** What the `metadata` event and the evaluation record say of reranking. */
export type RerankOutcome =
  | { applied: true; candidates: number; latencyMs: number }
  | { applied: false; reason: string; latencyMs: number | null };

export interface RerankRequest {
  enabled: boolean;
  candidates: number;
}

export interface Reranked {
  /** The candidates in the order the strategy should take them, `score` being that order's key. */
  ordered: Candidate[];
  /** The reranker's score of each reranked candidate, by id. */
  scores: Map<string, number>;
  outcome: RerankOutcome;
}

/**
 * Whether and how much a question reranks: as the request says, else as its collections say (on only when
 * every one searched is on, as several collections share a strategy only when they all have it), else the
 * default. The candidates are the most any of them asks for.
 */
export function rerankRequestFor(
  collections: readonly { config: Record<string, unknown> }[],
  asked: boolean | undefined,
): RerankRequest {
  const onIn = (c: { config: Record<string, unknown> }) =>
    typeof c.config.rerank === 'boolean' ? c.config.rerank : DEFAULT_CONFIG.rerank;
  const countIn = (c: { config: Record<string, unknown> }) => {
    const n = c.config.rerank_candidates;
    return typeof n === 'number' && Number.isInteger(n) && n > 0
      ? Math.min(n, MAX_RERANK_CANDIDATES)
      : DEFAULT_CONFIG.rerank_candidates;
  };
  const enabled = asked ?? (collections.length > 0 ? collections.every(onIn) : DEFAULT_CONFIG.rerank);
  const candidates = collections.length > 0 ? Math.max(...collections.map(countIn)) : DEFAULT_CONFIG.rerank_candidates;
  return { enabled, candidates };
}

/** What the cross-encoder reads of a passage: its heading path, then its text. */
export function rerankText(candidate: Candidate): string {
  const text = typeof candidate.metadata.text === 'string' ? candidate.metadata.text : '';
  const { heading } = locationOf(candidate.metadata);
  return heading ? `${heading}\n${text}` : text;
}

const byScore = (candidates: readonly Candidate[]) =>
  [...candidates].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

/**
 * Reorders the best `candidates` of the fused list by the reranker (the rest keep their fused order,
 * after them). A reranker that is missing, fails or overruns `budgetMs` leaves the fused order, and the
 * outcome says why: reranking never fails a question.
 */
export async function rerankCandidates(
  rerank: Models['rerank'],
  query: string,
  found: readonly Candidate[],
  request: RerankRequest,
  options: { budgetMs: number; order?: RerankOrder; onUsage?: UsageSink },
): Promise<Reranked> {
  const fused = byScore(found);
  const unchanged = (outcome: RerankOutcome): Reranked => ({ ordered: fused, scores: new Map(), outcome });
  if (!request.enabled) return unchanged({ applied: false, reason: 'off', latencyMs: null });
  if (!rerank) return unchanged({ applied: false, reason: 'no reranking model is configured', latencyMs: null });
  const head = fused.slice(0, request.candidates);
  if (head.length === 0) return unchanged({ applied: false, reason: 'no candidates', latencyMs: null });

  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const budget = AbortSignal.timeout(options.budgetMs);
  // The abort ends the call; the race ends the wait even for a provider that ignores the abort.
  let onAbort = () => {};
  const overrun = new Promise<'timeout'>((resolve) => {
    onAbort = () => resolve('timeout');
    budget.addEventListener('abort', onAbort);
  });
  let ranking: Awaited<ReturnType<NonNullable<Models['rerank']>>> | 'timeout';
  try {
    ranking = await Promise.race([
      rerank(query, head.map(rerankText), {
        abortSignal: budget,
        maxTokensPerPassage: RERANK_PASSAGE_TOKENS,
        ...(options.onUsage ? { onUsage: options.onUsage } : {}),
      }),
      overrun,
    ]);
  } catch (error) {
    if (budget.aborted) ranking = 'timeout';
    else {
      logUnowned('warn', 'rerank_failed', {
        worker: 'api',
        message: `rerank failed, answering with the fused order: ${error instanceof Error ? error.message.slice(0, 300) : String(error)}`,
      });
      return unchanged({ applied: false, reason: 'the reranker failed', latencyMs: elapsed() });
    }
  } finally {
    budget.removeEventListener('abort', onAbort);
  }
  if (ranking === 'timeout') {
    return unchanged({ applied: false, reason: `the reranker took longer than ${options.budgetMs} ms`, latencyMs: elapsed() });
  }
  const valid = ranking.filter(
    (r) => Number.isInteger(r.index) && r.index >= 0 && r.index < head.length && Number.isFinite(r.score),
  );
  if (new Set(valid.map((r) => r.index)).size !== head.length) {
    return unchanged({ applied: false, reason: 'the reranker did not score every candidate', latencyMs: elapsed() });
  }

  const scores = new Map(valid.map((r) => [(head[r.index] as Candidate).id, r.score]));
  const rerankRank = new Map(
    [...valid].sort((a, b) => b.score - a.score).map((r, rank) => [(head[r.index] as Candidate).id, rank]),
  );
  const order = options.order ?? RERANK_ORDER;
  // Keys above every unreranked candidate's (negative) key, so the reranked head stays ahead.
  const key = (candidate: Candidate, fusedRank: number): number => {
    const rank = rerankRank.get(candidate.id);
    if (rank === undefined) return -1 - fusedRank;
    return order === 'replace' ? 2 - rank / head.length : 1 / (RRF_K + 1 + fusedRank) + 1 / (RRF_K + 1 + rank);
  };
  // Equal keys (RRF gives ranks i, j and j, i the same sum) keep the fused order, not the ids' order; each
  // candidate's score then becomes its place (n, n - 1, …, 1), so the strategy's own sort cannot undo it.
  const ordered = fused
    .map((candidate, rank) => ({ candidate, key: key(candidate, rank), rank }))
    .sort((a, b) => b.key - a.key || a.rank - b.rank)
    .map(({ candidate }, place) => ({ ...candidate, score: fused.length - place }));
  return { ordered, scores, outcome: { applied: true, candidates: head.length, latencyMs: elapsed() } };
}

/**
 * The strategy on the reranked order. Similarity and MMR take it as their relevance; a threshold is
 * decided on the scores the index gave (the reranker's are on another scale), then takes the order.
 * Each chosen candidate keeps the score the index gave it.
 */
export function chooseAfterRerank(
  found: readonly Candidate[],
  reranked: Reranked,
  plan: Strategy,
  topK: number,
  mode: QueryMode,
  fused: FusedContext,
): Candidate[] {
  const original = new Map(found.map((c) => [c.id, c]));
  const restore = (chosen: Candidate[]) => chosen.map((c) => original.get(c.id) ?? c);
  if (!reranked.outcome.applied) return applyStrategy(found, plan, topK, mode, fused);
  if (plan.kind === 'threshold') {
    const passing = new Set(applyStrategy(found, plan, found.length, mode, fused).map((c) => c.id));
    return restore(reranked.ordered.filter((c) => passing.has(c.id)).slice(0, topK));
  }
  return restore(applyStrategy(reranked.ordered, plan, topK, mode, fused));
}
