import { convexFuse, distributionFuse, type Fusion } from './fusion.ts';
import type { Candidate, Evidence, QueryMode } from './strategies.ts';

/** Reciprocal rank fusion's constant, 60 as Upstash fixes it (devstack/vector/fusion.ts does the same). */
const RRF_K = 60;

/** What one namespace answered for a question: a dense list, a sparse list, or both when they are fused. */
export interface NamespaceLists {
  namespace: string;
  dense?: readonly Candidate[];
  sparse?: readonly Candidate[];
}

export interface FusedAcross {
  found: Candidate[];
  mode: QueryMode;
  evidence?: Evidence;
}

/**
 * One candidate list from the lists of several namespaces, for a question over several collections.
 *
 * Each namespace's dense lists are merged into one by score, and so are its sparse lists: cosine is
 * on one scale in every namespace, and a BM25 score nearly so (its idf is the namespace's own). Then
 * the two merged lists are fused once, as a single namespace's would be. Fusing within each namespace
 * first would not compare: RRF gives every namespace's best passage the same score, and min–max or
 * distribution scaling makes every namespace's best a 1, however poor. Upstash fuses inside one
 * namespace only, so RRF and DBSF are done here, as Upstash does them.
 *
 * A candidate's id gets its namespace in front (a document's copy elsewhere has the same vector ids),
 * and `namespace` says where it was found.
 */
export function fuseAcross(lists: readonly NamespaceLists[], fusion: Fusion, pool: number): FusedAcross {
  const dense = lists.some((l) => l.dense) ? merged(lists, 'dense', pool) : undefined;
  const sparse = lists.some((l) => l.sparse) ? merged(lists, 'sparse', pool) : undefined;
  if (!dense) return { found: sparse ?? [], mode: 'sparse' };
  if (!sparse) return { found: dense, mode: 'dense' };
  const evidence = { dense, sparse };
  switch (fusion.kind) {
    case 'convex':
      return { found: convexFuse(dense, sparse, fusion.alpha, pool), mode: 'convex', evidence };
    case 'dbsf':
      // Both lists weighed alike is Upstash's DBSF halved: the same order.
      return {
        found: distributionFuse(dense, sparse, fusion.alpha ?? 0.5, pool),
        mode: fusion.alpha === undefined ? 'dbsf' : 'convex',
        evidence,
      };
    default:
      return { found: reciprocalRankFuse(dense, sparse, pool), mode: 'hybrid', evidence };
  }
}

function merged(lists: readonly NamespaceLists[], side: 'dense' | 'sparse', pool: number): Candidate[] {
  return lists
    .flatMap(({ namespace, [side]: list }) => (list ?? []).map((c) => ({ ...c, id: `${namespace}/${c.id}`, namespace })))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, pool);
}

/** Σ 1 / (60 + rank) over the lists a candidate is in, rank from 1; best first, ties by id. */
export function reciprocalRankFuse(dense: readonly Candidate[], sparse: readonly Candidate[], topK: number): Candidate[] {
  const fused = new Map<string, Candidate>();
  for (const list of [sparse, dense]) {
    list.forEach((candidate, index) => {
      const earlier = fused.get(candidate.id);
      fused.set(candidate.id, { ...earlier, ...candidate, score: (earlier?.score ?? 0) + 1 / (RRF_K + index + 1) });
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, topK);
}
