import { createOpenAI } from '@ai-sdk/openai';
import { embedMany, generateText, type LanguageModel, streamText } from 'ai';
import { describeCause, UpstreamError } from './upstream-error.ts';

export interface ModelSettings {
  /** Any OpenAI-compatible endpoint; the devstack's locally. */
  baseUrl?: string;
  apiKey: string;
  /** Unset: no dense embeddings, and retrieval runs on sparse vectors alone. */
  embeddingModel?: string;
  /** The model that writes answers (the API). */
  chatModel?: string;
  embeddingDimensions?: number;
  /** Needed only where figures are described (the ingest worker). */
  visionModel?: string;
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
  /** A chat model of this endpoint, for code that prompts it through the AI SDK itself (the judge). */
  languageModel(name: string): LanguageModel;
}

const DESCRIBE_PROMPT =
  'Describe this image from a document for a search index. Transcribe all legible text exactly, ' +
  'then summarise any chart, table or diagram in a few sentences. Answer with the description only.';

export function createModels(settings: ModelSettings): Models {
  const provider = createOpenAI({ baseURL: settings.baseUrl, apiKey: settings.apiKey });
  const guard = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw new UpstreamError('models', `${what}: ${describeCause(error)}`, { cause: error });
    }
  };
  const embeddingModel = settings.embeddingModel;

  const chatModel = settings.chatModel;

  return {
    engine: `${settings.baseUrl ? new URL(settings.baseUrl).host : 'api.openai.com'}/${chatModel ?? 'none'}`,

    async *streamAnswer(request) {
      if (!chatModel) throw new UpstreamError('models', 'no chat model is configured');
      let failure: unknown;
      const result = streamText({
        model: provider.chat(chatModel),
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

    embed: embeddingModel
      ? (texts) =>
          guard('embed', async () => {
            const { embeddings } = await embedMany({
              model: provider.embedding(embeddingModel),
              values: texts,
              maxRetries: 1,
              ...(settings.embeddingDimensions
                ? { providerOptions: { openai: { dimensions: settings.embeddingDimensions } } }
                : {}),
            });
            return embeddings;
          })
      : null,

    describeImage: (png) =>
      guard('describe image', async () => {
        if (!settings.visionModel) throw new Error('no vision model is configured');
        const { text } = await generateText({
          model: provider.chat(settings.visionModel),
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

    languageModel: (name) => provider.chat(name),
  };
}
