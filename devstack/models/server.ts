import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { bearerAuth } from './auth.ts';
import { chatCompletions, type TextEngine } from './chat-handler.ts';
import { createEmbeddedTexts } from './embedded-texts.ts';
import type { EmbeddingEngine } from './embedding-engine.ts';
import { resolveEmbeddingSource } from './embedding-source.ts';
import { startEmbeddingWorker } from './embedding-worker.ts';
import { embeddings } from './embeddings-handler.ts';
import { OpenAIError, renderError } from './errors.ts';
import { createExtractiveEngine, EXTRACTIVE_MODEL } from './extractive-engine.ts';
import { DEFAULT_IMAGE_LIMITS, type ImageLimits } from './images.ts';
import { createOcrEngine } from './ocr-engine.ts';
import { rerank, startDevstackReranker } from './rerank-handler.ts';

export type { ChatMessage, TextEngine, TextEngineOptions } from './chat-handler.ts';

export interface ModelOptions {
  /** Bearer token required. */
  apiKey: string;
  /**
   * Embedding model: a local directory with an ONNX sentence-embedding model (transformers.js layout), or a hub
   * id, or a folder name of shared/weights. Null/undefined → shared/weights/bge-small-en-v1.5, else the first model
   * directory there, else the default hub id `Xenova/bge-small-en-v1.5` when it is in cacheDir (or may be downloaded
   * there, see allowDownload).
   */
  embeddingModel?: string | null;
  /** Models and Tesseract's unpacked language data live here, e.g. .data/models. */
  cacheDir: string;
  /** Let a hub id that is not in cacheDir be downloaded into it (needs internet). Off by default: CI has none. */
  allowDownload?: boolean;
  /**
   * Answers text-only chat requests. Defaults to the extractive engine, which quotes the passages of a prompt in the
   * layout of #core/contracts/answer-prompt-format.ts; null turns text generation off, and such requests get 501.
   */
  textEngine?: TextEngine | null;
  /** The name text-only requests may use besides the vision model's; defaults to DEFAULT_TEXT_MODEL. */
  textModel?: string;
  /** Where shared/weights is; defaults to the one beside the repository. */
  sharedModelsDir?: string;
  imageLimits?: Partial<ImageLimits>;
  /** The cross-encoder for POST /v1/rerank: a directory, or 'off'; unset: shared/weights' ms-marco-MiniLM-L-12-v2. */
  rerankModel?: string | null;
  log?: (line: string) => void;
}

export interface ModelServer {
  /** Routes relative to the mount point: mount with app.route('/openai', server.app). */
  app: Hono;
  /** The embedding model's name and dimension, or null when dense embeddings are unavailable (and why). */
  embeddings: { model: string; dimension: number } | null;
  embeddingsUnavailableReason?: string;
  /** The model names the server answers to. */
  models: { embedding: string; vision: string; text?: string; rerank?: string };
  close(): Promise<void>;
}

export const VISION_MODEL = 'devstack-ocr';
export const DEFAULT_TEXT_MODEL = EXTRACTIVE_MODEL;
// Enough for a few full-page scans as base64 data URLs.
const MAX_BODY_BYTES = 64 * 1024 * 1024;

export function defaultSharedModelsDir(): string {
  return fileURLToPath(new URL('../../../shared/weights', import.meta.url));
}

/**
 * An OpenAI-compatible API on real local engines: transformers.js for /v1/embeddings, Tesseract OCR
 * for image messages on /v1/chat/completions and, for text-only messages, an extractive answerer. The AI SDK talks to it with
 * `createOpenAI({ baseURL: '<mount>/v1', apiKey })` and `openai.embedding(id)` / `openai.chat(id)`.
 */
export async function createModelServer(options: ModelOptions): Promise<ModelServer> {
  if (!options.apiKey) throw new Error('createModelServer: apiKey is required');
  const log = options.log ?? (() => {});
  const imageLimits: ImageLimits = { ...DEFAULT_IMAGE_LIMITS, ...options.imageLimits };

  let engine: EmbeddingEngine | null = null;
  let unavailableReason: string | undefined;
  const resolved = await resolveEmbeddingSource({
    embeddingModel: options.embeddingModel,
    sharedModelsDir: options.sharedModelsDir ?? defaultSharedModelsDir(),
    cacheDir: options.cacheDir,
    allowDownload: options.allowDownload ?? false,
  });
  if ('unavailable' in resolved) {
    unavailableReason = resolved.unavailable;
  } else {
    const started = Date.now();
    try {
      engine = await startEmbeddingWorker(resolved.source, options.cacheDir);
      log(
        `openai: embeddings from ${resolved.source.name} (${resolved.source.dtype}, ${resolved.source.pooling} pooling, ` +
          `${engine.dimension} dimensions) loaded in ${Date.now() - started} ms`,
      );
    } catch (error) {
      unavailableReason = `loading ${resolved.source.id} failed: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  if (!engine) log(`dense embeddings unavailable: ${unavailableReason}; retrieval will use sparse vectors only`);

  const reranker = await startDevstackReranker(options.rerankModel, options.sharedModelsDir ?? defaultSharedModelsDir());
  const rerankEngine = 'engine' in reranker ? reranker.engine : null;
  log(
    rerankEngine
      ? `openai: reranking with ${rerankEngine.model}`
      : `reranking unavailable: ${'unavailable' in reranker ? reranker.unavailable : ''}`,
  );

  const ocr = createOcrEngine({ cacheDir: options.cacheDir, log });
  const textEngine = options.textEngine === undefined ? createExtractiveEngine() : (options.textEngine ?? undefined);
  const textModel = textEngine ? (options.textModel ?? DEFAULT_TEXT_MODEL) : undefined;
  const chatModels = textModel ? [VISION_MODEL, textModel] : [VISION_MODEL];
  log(textModel ? `openai: text-only chat answered as ${textModel}` : 'openai: text generation turned off (501)');
  const embeddingName = engine?.model ?? (('source' in resolved && resolved.source.name) || 'none');

  const app = new Hono();
  app.onError((error, c) => renderError(c, error, log));
  app.use('*', bearerAuth(options.apiKey));
  app.use(
    '*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) =>
        c.json(new OpenAIError(413, 'invalid_request_error', `request body exceeds ${MAX_BODY_BYTES} bytes`).body(), 413),
    }),
  );

  const listed = [...(engine ? [engine.model] : []), ...chatModels];
  app.get('/v1/models', (c) =>
    c.json({ object: 'list', data: listed.map((id) => ({ id, object: 'model', created: 0, owned_by: 'devstack' })) }),
  );
  app.get('/v1/models/:id{.+}', (c) => {
    const id = c.req.param('id');
    if (!listed.includes(id))
      throw new OpenAIError(404, 'invalid_request_error', `The model '${id}' does not exist`, 'model_not_found');
    return c.json({ id, object: 'model', created: 0, owned_by: 'devstack' });
  });
  const embedded = createEmbeddedTexts();
  app.post('/v1/embeddings', embeddings({ engine, unavailableReason, embedded }));
  // Not OpenAI's: how many embedding inputs contained a test's marker (embedded-texts.ts).
  app.get('/devstack/embedded', (c) => c.json(embedded.containing(c.req.query('containing') ?? '')));
  // Cohere's v2 rerank API (what @ai-sdk/cohere speaks), on the same mount: RERANK_BASE_URL is '<mount>/v1'.
  app.post(
    '/v1/rerank',
    rerank({ engine: rerankEngine, unavailableReason: 'unavailable' in reranker ? reranker.unavailable : undefined }),
  );
  app.post('/v1/chat/completions', chatCompletions({ models: chatModels, ocr, textEngine, imageLimits, log }));
  // A route rather than notFound(): a mounted app's notFound handler is not consulted by the parent.
  app.all('*', (c) =>
    c.json(new OpenAIError(404, 'invalid_request_error', `Unknown request URL: ${c.req.method} ${c.req.path}`).body(), 404),
  );

  return {
    app,
    embeddings: engine ? { model: engine.model, dimension: engine.dimension } : null,
    ...(unavailableReason ? { embeddingsUnavailableReason: unavailableReason } : {}),
    models: {
      embedding: embeddingName,
      vision: VISION_MODEL,
      ...(textModel ? { text: textModel } : {}),
      ...(rerankEngine ? { rerank: rerankEngine.model } : {}),
    },
    close: async () => {
      await Promise.all([ocr.close(), engine?.close(), rerankEngine?.close()]);
    },
  };
}
