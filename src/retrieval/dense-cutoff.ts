import { DEFAULT_SCORE_THRESHOLD } from './strategies.ts';

/**
 * The `threshold` strategy's default cut-off for dense scores, by embedding model. Upstash reports COSINE
 * similarity as (1 + cos) / 2, and models spread their cosines differently: BGE's v1.5 models place even
 * unrelated text of one field well above 0.3 in cosine, where all-MiniLM-L6-v2 and OpenAI's models keep it below.
 *
 * Measured with the model card's instruction before the question, on the first 100 SciFact training claims
 * against their judged abstract and an unrelated one, scores as Upstash reports them
 * (`npx tsx bench/retrieval/embedding-scores.ts --model <name>`):
 *
 * | model | relevant p10 / p50 | unrelated p50 / p90 / max |
 * |---|---|---|
 * | bge-small-en-v1.5 | 0.829 / 0.887 | 0.775 / 0.814 / 0.832 |
 * | all-MiniLM-L6-v2 | 0.671 / 0.798 | 0.534 / 0.619 / 0.679 |
 *
 * 0.82 (cos 0.64) does for bge-small what 0.65 (cos 0.3) does for all-MiniLM: most answers pass, most unrelated
 * text of the same field does not, and text of another field (0.6–0.7 for bge-small) never does.
 */
const BGE_V15_DENSE_CUTOFF = 0.82;
const BGE_V15 = /(^|[/@:])bge-(small|base|large)-en-v1\.5$/i;

export function denseCutoffFor(model: string | undefined): number {
  return model && BGE_V15.test(model.trim()) ? BGE_V15_DENSE_CUTOFF : DEFAULT_SCORE_THRESHOLD.dense;
}
