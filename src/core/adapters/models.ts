import { createCohere } from '@ai-sdk/cohere';
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, embedMany, generateText, type LanguageModel, rerank } from 'ai';
import { describeCause, UpstreamError } from './upstream-error.ts';

/** An OpenAI-compatible endpoint: unset baseUrl means OpenAI itself. */
export interface Endpoint {
  baseUrl?: string;
  apiKey: string;
}

/** A role's model, and its own endpoint when it has one; otherwise the shared one serves it. */
export type RoleModel = { model: string } & Partial<Endpoint>;

/**
 * The four roles a model plays. Each may live on its own provider (chat on OpenAI, embeddings on a
 * local server); a role with no endpoint of its own uses `shared`.
 */
export interface ModelSettings extends Endpoint {
  /** The model that writes answers (the API). */
  chat?: RoleModel;
  /** Unset: no dense embeddings, and retrieval runs on sparse vectors alone. */
  embedding?: RoleModel & { dimensions?: number };
  /** Needed only where figures are described (the ingest worker). */
  vision?: RoleModel;
  /** The scoring worker's judge; unset: the lexical scorer. */
  judge?: RoleModel;
  /**
   * The API's reranker, spoken to in Cohere's rerank API (Cohere's own, or a server in its shape, as the
   * devstack's). Its endpoint falls back to the shared one, and without that to Cohere's.
   */
  rerank?: RoleModel;
}

/**
 * What one model call cost, as its provider reported it: tokens in and out, and for embeddings from a
 * provider that reports no tokens, the characters sent. `model` is the model's name, as its setting gives it
 * (the key of the price table, MODEL_PRICES).
 */
export interface ModelUsage {
  kind: 'answer' | 'embedding' | 'rerank' | 'vision' | 'judge';
  model: string;
  inputTokens: number;
  outputTokens: number;
  /** Characters sent, where the provider reported no token count (embeddings); else 0. */
  characters: number;
  /** Passages sent to the reranker; else 0. */
  documents: number;
}

/** A call's usage goes to whoever made it, who knows the user, key and collection it belongs to. */
export type UsageSink = (usage: ModelUsage) => void;

/** One passage's place in the reranker's order: its index in the request and its relevance score. */
export interface Ranked {
  index: number;
  score: number;
}

export interface AnswerRequest {
  system: string;
  prompt: string;
  /** Earlier turns of the conversation, oldest first, sent before the prompt. */
  history?: { role: 'user' | 'assistant'; content: string }[];
  /** The client's disconnect: generation stops with it. */
  abortSignal?: AbortSignal;
  /** Told the stream's own usage report (its finish part), once, when the provider sends one. */
  onUsage?: UsageSink;
}

export interface Models {
  /** Streams an answer's text deltas; iterating throws if generation fails. */
  streamAnswer(request: AnswerRequest): AsyncIterable<string>;
  /** Names the provider and model that answer, for evaluation records. */
  engine: string;
  /** Null when no embedding model is configured. */
  embed: ((texts: string[], onUsage?: UsageSink) => Promise<number[][]>) | null;
  /** What a figure, scanned page or uploaded image shows, in words, for retrieval; `mediaType` is image/png, image/jpeg or image/webp. */
  describeImage(image: Uint8Array, mediaType: string, onUsage?: UsageSink): Promise<string>;
  /** The judge's model name, for usage records; null without one. */
  judgeModel: string | null;
  /** The judge role's model, for code that prompts it through the AI SDK itself; null without one. */
  judge: LanguageModel | null;
  /**
   * Every passage's relevance to the query, best first; null when no reranking model is configured.
   * Throws UpstreamError when the provider fails; one call, no retry: its caller has a time budget.
   */
  rerank:
    | ((
        query: string,
        passages: string[],
        options: { abortSignal?: AbortSignal; maxTokensPerPassage?: number; onUsage?: UsageSink },
      ) => Promise<Ranked[]>)
    | null;
  /** Names the reranking provider's host and model, for evaluation records; null without one. */
  rerankEngine: string | null;
}

/** What the vision model is asked of each image (exported for the usage test, which asks the same). */
export const DESCRIBE_PROMPT =
  'Describe this image from a document for a search index. Transcribe all legible text exactly, ' +
  'then summarise any chart, table or diagram in a few sentences. Answer with the description only.';

type ChatPrompt = Parameters<ReturnType<ReturnType<typeof createOpenAI>['chat']>['doStream']>[0]['prompt'];

/**
 * One retry for a call the provider says may succeed later (429, 5xx), as the AI SDK's own calls
 * make: after its Retry-After when it gives one of at most 10 s, else 2 s. Null: do not retry.
 */
function retryDelayMs(error: unknown): number | null {
  if (!APICallError.isInstance(error) || !error.isRetryable) return null;
  const headers = error.responseHeaders ?? {};
  const asked = headers['retry-after-ms']
    ? Number(headers['retry-after-ms'])
    : headers['retry-after']
      ? Number(headers['retry-after']) * 1000
      : Number.NaN;
  return asked >= 0 && asked <= 10_000 ? asked : 2000;
}

const hostOf = (baseUrl?: string) => (baseUrl ? new URL(baseUrl).host : 'api.openai.com');

/** Cohere's rerank answer reports `meta.tokens.input_tokens` (the devstack's too); others may not. */
function rerankInputTokens(body: unknown): number {
  const meta = (body as { meta?: { tokens?: { input_tokens?: unknown } } } | null)?.meta;
  const tokens = meta?.tokens?.input_tokens;
  return typeof tokens === 'number' && Number.isFinite(tokens) ? tokens : 0;
}

const noUsage = { inputTokens: 0, outputTokens: 0, characters: 0, documents: 0 };

export function createModels(settings: ModelSettings): Models {
  const providers = new Map<string, ReturnType<typeof createOpenAI>>();
  /** The role's provider: its own endpoint, or the shared one; one client per distinct endpoint. */
  const providerFor = (role?: Partial<Endpoint>) => {
    const baseURL = role?.baseUrl ?? settings.baseUrl;
    const apiKey = role?.apiKey ?? settings.apiKey;
    const key = `${baseURL ?? ''}\n${apiKey}`;
    let provider = providers.get(key);
    if (!provider) {
      provider = createOpenAI({ baseURL, apiKey });
      providers.set(key, provider);
    }
    return provider;
  };
  const guard = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw new UpstreamError('models', `${what}: ${describeCause(error)}`, { cause: error });
    }
  };
  const { chat, embedding, vision, judge } = settings;
  const reranker = settings.rerank;
  const rerankBaseUrl = reranker?.baseUrl ?? settings.baseUrl;
  const rerankEngine = reranker ? `${rerankBaseUrl ? new URL(rerankBaseUrl).host : 'api.cohere.com'}/${reranker.model}` : null;
  const rerankModel = reranker
    ? createCohere({ baseURL: rerankBaseUrl, apiKey: reranker.apiKey ?? settings.apiKey }).reranking(reranker.model)
    : null;

  return {
    engine: `${hostOf(chat?.baseUrl ?? settings.baseUrl)}/${chat?.model ?? 'none'}`,
    judgeModel: judge?.model ?? null,

    async *streamAnswer(request) {
      if (!chat) throw new UpstreamError('models', 'no chat model is configured');
      const model = providerFor(chat).chat(chat.model);
      const prompt: ChatPrompt = [
        { role: 'system', content: request.system },
        ...(request.history ?? []).map((turn) => ({ role: turn.role, content: [{ type: 'text' as const, text: turn.content }] })),
        { role: 'user', content: [{ type: 'text', text: request.prompt }] },
      ];
      // The model's own stream, not streamText's: streamText relays every delta through about eight
      // more streams (tools, steps, output, a tee), and a profile of POST /query/ put that relay at
      // most of the API worker's CPU per answer (docs/benchmarks.md, "The ask path's own CPU").
      const call = async () => model.doStream({ prompt, abortSignal: request.abortSignal });
      const { stream } = await call()
        .catch(async (error: unknown) => {
          const wait = retryDelayMs(error);
          if (wait === null || request.abortSignal?.aborted) throw error;
          await new Promise((resolve) => setTimeout(resolve, wait));
          return call();
        })
        .catch((error: unknown) => {
          throw new UpstreamError('models', `generate: ${describeCause(error)}`, { cause: error });
        });
      const reader = stream.getReader();
      try {
        for (let next = await reader.read(); !next.done; next = await reader.read()) {
          const part = next.value;
          if (part.type === 'text-delta' && part.delta) yield part.delta;
          else if (part.type === 'finish' && request.onUsage && part.usage.inputTokens.total !== undefined)
            // The provider's own count (OpenAI's stream_options.include_usage, which the SDK asks for).
            request.onUsage({
              ...noUsage,
              kind: 'answer',
              model: chat.model,
              inputTokens: part.usage.inputTokens.total,
              outputTokens: part.usage.outputTokens.total ?? 0,
            });
          else if (part.type === 'error')
            throw new UpstreamError('models', `generate: ${describeCause(part.error)}`, { cause: part.error });
        }
      } finally {
        await reader.cancel().catch(() => {});
      }
    },

    embed: embedding
      ? (texts, onUsage) =>
          guard('embed', async () => {
            const { embeddings, usage } = await embedMany({
              model: providerFor(embedding).embedding(embedding.model),
              values: texts,
              maxRetries: 1,
              ...(embedding.dimensions ? { providerOptions: { openai: { dimensions: embedding.dimensions } } } : {}),
            });
            onUsage?.({
              ...noUsage,
              kind: 'embedding',
              model: embedding.model,
              inputTokens: usage.tokens,
              // A provider that reports no tokens is counted in characters instead.
              characters: usage.tokens > 0 ? 0 : texts.reduce((sum, text) => sum + text.length, 0),
            });
            return embeddings;
          })
      : null,

    describeImage: (image, mediaType, onUsage) =>
      guard('describe image', async () => {
        if (!vision) throw new Error('no vision model is configured');
        const { text, usage } = await generateText({
          model: providerFor(vision).chat(vision.model),
          maxRetries: 1,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: DESCRIBE_PROMPT },
                { type: 'image', image, mediaType },
              ],
            },
          ],
        });
        onUsage?.({
          ...noUsage,
          kind: 'vision',
          model: vision.model,
          inputTokens: usage.inputTokens ?? 0,
          outputTokens: usage.outputTokens ?? 0,
        });
        return text.trim();
      }),

    judge: judge ? providerFor(judge).chat(judge.model) : null,

    rerank: rerankModel
      ? (query, passages, options) =>
          guard('rerank', async () => {
            const { ranking, response } = await rerank({
              model: rerankModel,
              query,
              documents: passages,
              maxRetries: 0,
              abortSignal: options.abortSignal,
              ...(options.maxTokensPerPassage
                ? { providerOptions: { cohere: { maxTokensPerDoc: options.maxTokensPerPassage } } }
                : {}),
            });
            options.onUsage?.({
              ...noUsage,
              kind: 'rerank',
              model: reranker?.model ?? 'rerank',
              inputTokens: rerankInputTokens(response.body),
              documents: passages.length,
            });
            return ranking.map((r) => ({ index: r.originalIndex, score: r.score }));
          })
      : null,
    rerankEngine,
  };
}
