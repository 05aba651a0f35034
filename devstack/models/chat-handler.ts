import type { Context } from 'hono';
import { z } from 'zod';
import {
  type CompletionMeta,
  chunkWriter,
  completionBody,
  completionMeta,
  estimateTokens,
  type FinishReason,
  sseResponse,
  truncateToTokens,
  usageOf,
} from './chat-format.ts';
import { invalidRequest, modelNotFound, OpenAIError } from './errors.ts';
import { checkImage, type ImageLimits, imageInputTokens, loadImageUrl } from './images.ts';
import { type OcrEngine, UnreadableImageError } from './ocr-engine.ts';
import { parseBody } from './request.ts';

/** A message as a text engine sees it: the text of its parts, images left out. */
export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content: string;
}

export interface TextEngineOptions {
  maxTokens?: number;
  temperature?: number;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/** Generates the assistant's reply piece by piece; plugged in by whoever has a text model. */
export type TextEngine = (messages: ChatMessage[], options: TextEngineOptions) => AsyncIterable<string>;

const textPart = z.object({ type: z.literal('text'), text: z.string() });
const imagePart = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: z.string().min(1), detail: z.string().nullish() }),
});
const message = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textPart, imagePart])), z.null()]).optional(),
});
const chatRequest = z.object({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  n: z.literal(1, { error: 'only n=1 is supported' }).nullish(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
});
type ChatRequest = z.infer<typeof chatRequest>;
type RequestMessage = ChatRequest['messages'][number];

export interface ChatDeps {
  /** Model names the endpoint answers to; routing is by content, not by name. */
  models: string[];
  ocr: OcrEngine;
  textEngine?: TextEngine;
  imageLimits: ImageLimits;
  log: (line: string) => void;
}

function textOf(m: RequestMessage): string {
  if (typeof m.content === 'string') return m.content;
  return (m.content ?? []).flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

/**
 * POST /v1/chat/completions. A last user message with images is answered with the OCR of those images
 * (the devstack's vision model); anything else goes to the text engine, or gets 501 when the server has none.
 */
export function chatCompletions(deps: ChatDeps) {
  return async (c: Context): Promise<Response> => {
    const request = await parseBody(c, chatRequest);
    if (!deps.models.includes(request.model)) throw modelNotFound(request.model, deps.models);
    const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? undefined;
    const promptTokens = request.messages.reduce((sum, m) => sum + estimateTokens(textOf(m)), 0);
    const meta = completionMeta(request.model);
    const includeUsage = request.stream_options?.include_usage === true;
    const errorEvent = errorEventFor(deps.log);

    const lastUserIndex = request.messages.findLastIndex((m) => m.role === 'user');
    const lastUser = request.messages[lastUserIndex];
    const images = Array.isArray(lastUser?.content)
      ? lastUser.content.flatMap((part, index) =>
          part.type === 'image_url' ? [{ url: part.image_url.url, detail: part.image_url.detail, index }] : [],
        )
      : [];

    if (images.length > 0) {
      const texts: string[] = [];
      // The images are input too: counted as OpenAI counts them, by their size.
      let imageTokens = 0;
      for (const image of images) {
        const param = `messages.${lastUserIndex}.content.${image.index}.image_url.url`;
        const bytes = await loadImageUrl(image.url, deps.imageLimits, param);
        imageTokens += imageInputTokens(checkImage(bytes, deps.imageLimits, param), image.detail);
        try {
          texts.push(await deps.ocr.recognize(bytes));
        } catch (error) {
          if (error instanceof UnreadableImageError) throw invalidRequest(`${error.message}`, param, 'invalid_image');
          throw error;
        }
      }
      const full = texts.filter((t) => t.length > 0).join('\n\n');
      const { text, truncated } = maxTokens === undefined ? { text: full, truncated: false } : truncateToTokens(full, maxTokens);
      const finish: FinishReason = truncated ? 'length' : 'stop';
      const inputTokens = promptTokens + imageTokens;
      const usage = usageOf(inputTokens, estimateTokens(text));
      if (!request.stream) return c.json(completionBody(meta, text, finish, usage));
      // The paragraphs go out as separate deltas, as a model would stream them.
      const pieces = text.split(/(?<=\n\n)/).filter((p) => p.length > 0);
      return sseResponse(streamEvents(meta, includeUsage, arrayIterable(pieces), finish, inputTokens), errorEvent, () => {});
    }

    if (!deps.textEngine) {
      throw new OpenAIError(501, 'not_implemented', 'text generation is turned off on this server', 'not_implemented');
    }
    const messages: ChatMessage[] = request.messages.map((m) => ({ role: m.role, content: textOf(m) }));
    const abort = new AbortController();
    c.req.raw.signal.addEventListener('abort', () => abort.abort(), { once: true });
    const generated = deps
      .textEngine(messages, {
        maxTokens,
        temperature: request.temperature ?? undefined,
        signal: abort.signal,
      })
      [Symbol.asyncIterator]();

    if (!request.stream) {
      let text = '';
      for (let next = await generated.next(); !next.done; next = await generated.next()) text += next.value;
      return c.json(completionBody(meta, text, 'stop', usageOf(promptTokens, estimateTokens(text))));
    }
    // The first piece is awaited before answering, so an engine that fails at once gets a proper error status.
    const first = await generated.next();
    const pieces = prepend(first, generated);
    return sseResponse(streamEvents(meta, includeUsage, pieces, 'stop', promptTokens), errorEvent, () => abort.abort());
  };
}

function errorEventFor(log: (line: string) => void) {
  return (error: unknown): { error: unknown } => {
    if (error instanceof OpenAIError) return error.body();
    log(`openai: text engine failed mid-stream: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return new OpenAIError(500, 'server_error', 'The server had an error while generating the response.').body();
  };
}

async function* arrayIterable(items: string[]): AsyncGenerator<string> {
  yield* items;
}

async function* prepend(first: IteratorResult<string>, rest: AsyncIterator<string>): AsyncGenerator<string> {
  if (first.done) return;
  try {
    yield first.value;
    for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
  } finally {
    // Reached early when the client goes away: let the engine stop too.
    await rest.return?.();
  }
}

async function* streamEvents(
  meta: CompletionMeta,
  includeUsage: boolean,
  pieces: AsyncIterable<string>,
  finish: FinishReason,
  promptTokens: number,
): AsyncGenerator<unknown> {
  const chunks = chunkWriter(meta, includeUsage);
  yield chunks.role();
  let text = '';
  for await (const piece of pieces) {
    if (piece.length === 0) continue;
    text += piece;
    yield chunks.content(piece);
  }
  yield chunks.finish(finish);
  if (includeUsage) yield chunks.usage(usageOf(promptTokens, estimateTokens(text)));
}
