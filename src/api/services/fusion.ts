import type { Candidate } from './retrieval-strategies.ts';

/**
 * How a question is searched when the index has both dense and sparse vectors. Upstash fuses the
 * two lists itself by rank (RRF) or by distribution-scaled score (DBSF); `convex` asks for each list
 * separately and mixes their min–max normalised scores, `alpha` on the dense side (Bruch et al.,
 * 2023, found a tuned convex mix beats RRF). `dense` and `sparse` use one list alone. Without an
 * embedding model every query is sparse.
 */
export type Fusion =
  | { kind: 'rrf' }
  | { kind: 'dbsf' }
  | { kind: 'convex'; alpha: number }
  | { kind: 'dense' }
  | { kind: 'sparse' };

/** `rrf`, `dbsf`, `dense`, `sparse` or `convex:<alpha>` with alpha in [0, 1], as RETRIEVAL_FUSION takes it. */
export function parseFusion(value: string): Fusion | null {
  const [kind, weight] = value.trim().toLowerCase().split(':');
  if (kind === 'convex') {
    const alpha = Number(weight);
    return weight !== undefined && weight !== '' && alpha >= 0 && alpha <= 1 ? { kind, alpha } : null;
  }
  if (weight !== undefined) return null;
  return kind === 'rrf' || kind === 'dbsf' || kind === 'dense' || kind === 'sparse' ? { kind } : null;
}

export const fusionName = (fusion: Fusion) => (fusion.kind === 'convex' ? `convex:${fusion.alpha}` : fusion.kind);

/** Scores scaled onto [0, 1] within their list; a list of equal scores is all 1. */
function normalised(list: readonly Candidate[]): Map<string, number> {
  const scores = list.map((c) => c.score);
  const [best, worst] = [Math.max(...scores), Math.min(...scores)];
  return new Map(list.map((c) => [c.id, best === worst ? 1 : (c.score - worst) / (best - worst)]));
}

/**
 * alpha · dense + (1 − alpha) · sparse over the union of both lists, a candidate missing from a
 * list scoring 0 there. Best first, ties by id; the candidate keeps the fields of whichever list
 * had it (the dense one's vector, for MMR).
 */
export function convexFuse(dense: readonly Candidate[], sparse: readonly Candidate[], alpha: number, topK: number): Candidate[] {
  const [d, s] = [normalised(dense), normalised(sparse)];
  const byId = new Map<string, Candidate>();
  for (const candidate of [...sparse, ...dense]) byId.set(candidate.id, { ...byId.get(candidate.id), ...candidate });
  return [...byId.values()]
    .map((candidate) => ({ ...candidate, score: alpha * (d.get(candidate.id) ?? 0) + (1 - alpha) * (s.get(candidate.id) ?? 0) }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, topK);
}
