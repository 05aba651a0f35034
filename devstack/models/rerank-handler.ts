import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Context } from 'hono';
import { z } from 'zod';
import { modelNotFound, OpenAIError } from './errors.ts';
import { parseBody } from './request.ts';
import type { RerankEngine } from './rerank-engine.ts';
import { startRerankWorker } from './rerank-worker.ts';

/** The cross-encoder the devstack reranks with unless told otherwise (shared/weights/README.md). */
export const DEFAULT_RERANK_MODEL = 'ms-marco-MiniLM-L-12-v2';
// Cohere's own cap on documents per request.
const MAX_DOCUMENTS = 1000;

/** Cohere's POST /v2/rerank body, which @ai-sdk/cohere sends (and Jina's and vLLM's rerank APIs resemble). */
const rerankRequest = z.object({
  model: z.string().min(1),
  query: z.string().min(1),
  documents: z.array(z.string()).min(1).max(MAX_DOCUMENTS),
  top_n: z.number().int().positive().nullish(),
  max_tokens_per_doc: z.number().int().positive().nullish(),
  priority: z.number().nullish(),
});

/**
 * The reranker to load: `wanted` (a directory, or 'off'), else the shared weights' cross-encoder.
 * Null with the reason when there is none; the rest of the model server works without it.
 */
export async function startDevstackReranker(
  wanted: string | null | undefined,
  sharedModelsDir: string,
): Promise<{ engine: RerankEngine } | { unavailable: string }> {
  if (wanted?.trim() === 'off') return { unavailable: 'reranking is turned off (DEVSTACK_RERANK_MODEL=off)' };
  const dir = resolve(wanted?.trim() || join(sharedModelsDir, DEFAULT_RERANK_MODEL));
  if (!existsSync(join(dir, 'onnx', 'model_quantized.onnx')))
    return { unavailable: `no int8 cross-encoder at ${dir} (onnx/model_quantized.onnx)` };
  try {
    return { engine: await startRerankWorker(dir, basename(dir)) };
  } catch (error) {
    return { unavailable: `loading ${dir} failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** POST /v1/rerank in Cohere's v2 shape: results best first, each with its index and a score in (0, 1). */
export function rerank(deps: { engine: RerankEngine | null; unavailableReason?: string }) {
  return async (c: Context): Promise<Response> => {
    const { engine } = deps;
    if (!engine) {
      throw new OpenAIError(503, 'service_unavailable', `reranking is unavailable on this devstack: ${deps.unavailableReason}`);
    }
    const request = await parseBody(c, rerankRequest);
    if (request.model !== engine.model) throw modelNotFound(request.model, [engine.model]);
    const { scores, tokens } = await engine.score(request.query, request.documents, request.max_tokens_per_doc ?? undefined);
    const results = scores
      .map((relevance_score, index) => ({ index, relevance_score }))
      .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
      .slice(0, request.top_n ?? scores.length);
    return c.json({
      id: crypto.randomUUID(),
      results,
      meta: { api_version: { version: '2' }, billed_units: { search_units: 1 }, tokens: { input_tokens: tokens } },
    });
  };
}
