/**
 * OpenAI Chat Completions response shapes: the `chat.completion` object, `chat.completion.chunk`
 * events and the SSE framing that ends with `data: [DONE]`.
 */

export type FinishReason = 'stop' | 'length';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/**
 * A stand-in for a tokenizer: words and punctuation marks. The stand-in answer engine has no tokenizer of
 * its own, so the usage it reports (which the service records, README "Usage and cost") is this count: an
 * approximation, near a real tokenizer's for plain English and below it for numbers, code and rare words.
 */
export function estimateTokens(text: string): number {
  return text.match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)?.length ?? 0;
}

/** Cuts text after `maxTokens` estimated tokens, as a model stops at its max_tokens. */
export function truncateToTokens(text: string, maxTokens: number): { text: string; truncated: boolean } {
  let count = 0;
  for (const match of text.matchAll(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)) {
    count += 1;
    if (count > maxTokens) return { text: text.slice(0, match.index).trimEnd(), truncated: true };
  }
  return { text, truncated: false };
}

export function usageOf(promptTokens: number, completionTokens: number): Usage {
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

export interface CompletionMeta {
  id: string;
  created: number;
  model: string;
}

export function completionMeta(model: string): CompletionMeta {
  return { id: `chatcmpl-${crypto.randomUUID().replaceAll('-', '')}`, created: Math.floor(Date.now() / 1000), model };
}

export function completionBody(meta: CompletionMeta, content: string, finishReason: FinishReason, usage: Usage) {
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: finishReason }],
    usage,
    system_fingerprint: null,
  };
}

/** Builds the chunks of one streamed completion; with include_usage every chunk carries `usage: null` until the last. */
export function chunkWriter(meta: CompletionMeta, includeUsage: boolean) {
  const chunk = (choices: unknown[], usage?: Usage) => ({
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    system_fingerprint: null,
    choices,
    ...(includeUsage ? { usage: usage ?? null } : {}),
  });
  return {
    role: () =>
      chunk([{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }]),
    content: (text: string) => chunk([{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }]),
    finish: (reason: FinishReason) => chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: reason }]),
    usage: (usage: Usage) => chunk([], usage),
  };
}

const encoder = new TextEncoder();

/**
 * Frames events as `data: <json>\n\n` and closes with `data: [DONE]`. An error after the first byte can no
 * longer change the status, so it goes out as an `{error}` event, as OpenAI does, and the stream ends.
 */
export function sseResponse(
  events: AsyncIterator<unknown>,
  onError: (error: unknown) => { error: unknown },
  onCancel: () => void,
): Response {
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await events.next();
        if (next.done) {
          controller.enqueue(encoder.encode('data: [DONE]\n\n'));
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(next.value)}\n\n`));
      } catch (error) {
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(onError(error))}\n\n`));
        controller.close();
      }
    },
    async cancel() {
      onCancel();
      await events.return?.();
    },
  });
  return new Response(body, {
    status: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
  });
}
