import type { Context } from 'hono';
import { z } from 'zod';
import type { EmbeddedTexts } from './embedded-texts.ts';
import type { EmbeddingEngine } from './embedding-engine.ts';
import { invalidRequest, modelNotFound, OpenAIError } from './errors.ts';
import { parseBody } from './request.ts';

// OpenAI's own limit on inputs per request, which the AI SDK also splits by.
const MAX_INPUTS = 2048;

const embeddingsRequest = z.object({
  model: z.string().min(1),
  input: z.union([
    z.string(),
    z.array(z.string()).min(1).max(MAX_INPUTS),
    // Token arrays are OpenAI tokenizer ids, meaningless to another model: recognised only to refuse them clearly.
    z.array(z.union([z.number(), z.array(z.number())])).min(1),
  ]),
  encoding_format: z.enum(['float', 'base64']).nullish(),
  dimensions: z.number().int().positive().nullish(),
  user: z.string().nullish(),
});

export interface EmbeddingsDeps {
  engine: EmbeddingEngine | null;
  unavailableReason?: string;
  /** Notes every text embedded, for GET /devstack/embedded. */
  embedded?: EmbeddedTexts;
}

function toBase64(vector: Float32Array): string {
  // OpenAI sends little-endian float32; so does every platform Node runs on, but say it rather than assume it.
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  for (const [i, v] of vector.entries()) view.setFloat32(i * 4, v, true);
  return Buffer.from(bytes).toString('base64');
}

/** POST /v1/embeddings: the local sentence-embedding model, or 503 when there is none. */
export function embeddings(deps: EmbeddingsDeps) {
  return async (c: Context): Promise<Response> => {
    const { engine } = deps;
    if (!engine) {
      throw new OpenAIError(
        503,
        'service_unavailable',
        `dense embeddings are unavailable on this devstack: ${deps.unavailableReason ?? 'no model loaded'}`,
        'embeddings_unavailable',
      );
    }
    const request = await parseBody(c, embeddingsRequest);
    if (request.model !== engine.model) throw modelNotFound(request.model, [engine.model]);
    const input = typeof request.input === 'string' ? [request.input] : request.input;
    const texts: string[] = [];
    for (const [i, value] of input.entries()) {
      if (typeof value !== 'string') throw invalidRequest('token arrays are not supported here; send the text', 'input');
      if (value.length === 0) throw invalidRequest(`'$.input[${i}]' is empty; every input must be a non-empty string`, 'input');
      texts.push(value);
    }
    if (request.dimensions != null && request.dimensions !== engine.dimension) {
      throw invalidRequest(
        `model ${engine.model} produces ${engine.dimension} dimensions and cannot be shortened to ${request.dimensions}`,
        'dimensions',
      );
    }
    const { vectors, tokens } = await engine.embed(texts);
    deps.embedded?.record(texts);
    const base64 = request.encoding_format === 'base64';
    return c.json({
      object: 'list',
      data: vectors.map((vector, index) => ({
        object: 'embedding',
        index,
        embedding: base64 ? toBase64(vector) : Array.from(vector),
      })),
      model: engine.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  };
}
