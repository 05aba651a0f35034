import type { Candidate } from './strategies.ts';

/**
 * How a question is searched when the index has both dense and sparse vectors. Upstash fuses the
 * two lists itself by rank (RRF) or by distribution-scaled score (DBSF); `convex` asks for each list
 * separately and mixes their min–max normalised scores, `alpha` on the dense side (Bruch et al.,
 * 2023, found a tuned convex mix beats RRF). `dense` and `sparse` use one list alone. Without an
 * embedding model every query is sparse.
 */
export type Fusion =
  | { kind: 'rrf' }
  | { kind: 'dbsf'; alpha?: number }
  | { kind: 'convex'; alpha: number }
  | { kind: 'dense' }
  | { kind: 'sparse' };

/**
 * `rrf`, `dbsf`, `dense`, `sparse`, `convex:<alpha>` or `dbsf:<alpha>` with alpha in [0, 1], as RETRIEVAL_FUSION
 * takes it. `dbsf` is Upstash's own fusion, both lists weighed alike; `dbsf:<alpha>` is the same scaling done here,
 * `alpha` on the dense side.
 */
export function parseFusion(value: string): Fusion | null {
  const [kind, weight] = value.trim().toLowerCase().split(':');
  if (kind === 'convex' || (kind === 'dbsf' && weight !== undefined)) {
    const alpha = Number(weight);
    return weight !== undefined && weight !== '' && alpha >= 0 && alpha <= 1 ? { kind, alpha } : null;
  }
  if (weight !== undefined) return null;
  return kind === 'rrf' || kind === 'dbsf' || kind === 'dense' || kind === 'sparse' ? { kind } : null;
}

export const fusionName = (fusion: Fusion) =>
  'alpha' in fusion && fusion.alpha !== undefined ? `${fusion.kind}:${fusion.alpha}` : fusion.kind;

/** Scores scaled onto [0, 1] within their list; a list of equal scores is all 1. */
function normalised(list: readonly Candidate[]): Map<string, number> {
  const scores = list.map((c) => c.score);
  const [best, worst] = [Math.max(...scores), Math.min(...scores)];
  return new Map(list.map((c) => [c.id, best === worst ? 1 : (c.score - worst) / (best - worst)]));
}

/**
 * Scores scaled between the list's mean − 3 sd and mean + 3 sd, as Upstash's DBSF does (so in [0, 1] for any
 * score within three deviations); a list of equal scores is all 0.5.
 */
function distributionScaled(list: readonly Candidate[]): Map<string, number> {
  if (list.length === 0) return new Map();
  const mean = list.reduce((sum, c) => sum + c.score, 0) / list.length;
  const deviation = Math.sqrt(list.reduce((sum, c) => sum + (c.score - mean) ** 2, 0) / list.length);
  const low = mean - 3 * deviation;
  return new Map(list.map((c) => [c.id, deviation === 0 ? 0.5 : (c.score - low) / (6 * deviation)]));
}

/** alpha · dense + (1 − alpha) · sparse, each list min–max scaled; see `mix`. */
export const convexFuse = (dense: readonly Candidate[], sparse: readonly Candidate[], alpha: number, topK: number) =>
  mix(normalised(dense), normalised(sparse), dense, sparse, alpha, topK);

/** alpha · dense + (1 − alpha) · sparse, each list scaled as DBSF scales it; see `mix`. */
export const distributionFuse = (dense: readonly Candidate[], sparse: readonly Candidate[], alpha: number, topK: number) =>
  mix(distributionScaled(dense), distributionScaled(sparse), dense, sparse, alpha, topK);

/**
 * alpha · dense + (1 − alpha) · sparse over the union of both lists, a candidate missing from a
 * list scoring 0 there. Best first, ties by id; the candidate keeps the fields of whichever list
 * had it (the dense one's vector, for MMR).
 */
function mix(
  d: ReadonlyMap<string, number>,
  s: ReadonlyMap<string, number>,
  dense: readonly Candidate[],
  sparse: readonly Candidate[],
  alpha: number,
  topK: number,
): Candidate[] {
  const byId = new Map<string, Candidate>();
  for (const candidate of [...sparse, ...dense]) byId.set(candidate.id, { ...byId.get(candidate.id), ...candidate });
  return [...byId.values()]
    .map((candidate) => ({ ...candidate, score: alpha * (d.get(candidate.id) ?? 0) + (1 - alpha) * (s.get(candidate.id) ?? 0) }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, topK);
}
