import type { Source } from '../../../client/index.ts';

export type { Source };

/** Where a passage sits, in words: "page 4", "sheet Q3", with its heading path. */
export function placeOf(source: Pick<Source, 'page' | 'heading'>): string {
  const where =
    typeof source.page === 'number' ? `page ${source.page}` : typeof source.page === 'string' ? `sheet ${source.page}` : null;
  return [where, source.heading].filter(Boolean).join(' · ');
}

/** A source's scores, as the panel lists them: the index's, and the reranker's when it ran. */
export function scoresOf(source: Source): string {
  const fused = `score ${source.score.toFixed(3)}`;
  return source.rerank_score === null ? fused : `${fused} · reranked ${source.rerank_score.toFixed(2)}`;
}
