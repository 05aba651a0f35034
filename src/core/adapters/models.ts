import { createOpenAI } from '@ai-sdk/openai';
import { embedMany, generateText, type LanguageModel, streamText } from 'ai';
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
}

export interface AnswerRequest {
  system: string;
  prompt: string;
  /** Earlier turns of the conversation, oldest first, sent before the prompt. */
  history?: { role: 'user' | 'assistant'; content: string }[];
  /** The client's disconnect: generation stops with it. */
  abortSignal?: AbortSignal;
}

export interface Models {
  /** Streams an answer's text deltas; iterating throws if generation fails. */
  streamAnswer(request: AnswerRequest): AsyncIterable<string>;
  /** Names the provider and model that answer, for evaluation records. */
  engine: string;
  /** Null when no embedding model is configured. */
  embed: ((texts: string[]) => Promise<number[][]>) | null;
  /** What a figure or scanned page shows, in words, for retrieval. */
  describeImage(png: Uint8Array): Promise<string>;
  /** The judge role's model, for code that prompts it through the AI SDK itself; null without one. */
  judge: LanguageModel | null;
}

const DESCRIBE_PROMPT =
  'Describe this image from a document for a search index. Transcribe all legible text exactly, ' +
  'then summarise any chart, table or diagram in a few sentences. Answer with the description only.';

const hostOf = (baseUrl?: string) => (baseUrl ? new URL(baseUrl).host : 'api.openai.com');

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

  return {
    engine: `${hostOf(chat?.baseUrl ?? settings.baseUrl)}/${chat?.model ?? 'none'}`,

    async *streamAnswer(request) {
      if (!chat) throw new UpstreamError('models', 'no chat model is configured');
      let failure: unknown;
      const result = streamText({
        model: providerFor(chat).chat(chat.model),
        system: request.system,
        messages: [...(request.history ?? []), { role: 'user' as const, content: request.prompt }],
        abortSignal: request.abortSignal,
        maxRetries: 1,
        onError: ({ error }) => {
          failure = error;
        },
      });
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta' && part.text) yield part.text;
        else if (part.type === 'error')
          throw new UpstreamError('models', `generate: ${describeCause(part.error)}`, { cause: part.error });
      }
      if (failure) throw new UpstreamError('models', `generate: ${describeCause(failure)}`, { cause: failure });
    },

    embed: embedding
      ? (texts) =>
          guard('embed', async () => {
            const { embeddings } = await embedMany({
              model: providerFor(embedding).embedding(embedding.model),
              values: texts,
              maxRetries: 1,
              ...(embedding.dimensions ? { providerOptions: { openai: { dimensions: embedding.dimensions } } } : {}),
            });
            return embeddings;
          })
      : null,

    describeImage: (png) =>
      guard('describe image', async () => {
        if (!vision) throw new Error('no vision model is configured');
        const { text } = await generateText({
          model: providerFor(vision).chat(vision.model),
          maxRetries: 1,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: DESCRIBE_PROMPT },
                { type: 'image', image: png, mediaType: 'image/png' },
              ],
            },
          ],
        });
        return text.trim();
      }),

    judge: judge ? providerFor(judge).chat(judge.model) : null,
  };
}
