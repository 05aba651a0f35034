import type { Models } from '#core/adapters/models.ts';
import type { Queue } from '#core/adapters/queue.ts';
import { isUuid } from '#core/db/client.ts';
import type { ExchangeRepo } from '#core/db/exchanges.ts';
import type { SessionRepo } from '#core/db/sessions.ts';
import { notFound } from '#core/errors.ts';
import { scoreMessage } from '#core/messages/scoring.ts';
import type { Caller } from '../auth/caller.ts';
import type { AccessService } from './access.ts';
import { buildAnswerPrompt } from './answer-prompt.ts';
import type { QueryService, Retrieval } from './retrieval.ts';

export interface AnswerInput {
  question: string;
  collectionId?: string;
  sessionId?: string;
  topK: number;
}

export type Prepared = Retrieval & { prompt: ReturnType<typeof buildAnswerPrompt> };

export interface AnswerOutcome {
  answer: string;
  generationMs: number;
  timeToFirstTokenMs: number | null;
  failed: boolean;
}

/**
 * A question answered in two halves: everything that can refuse the request (access,
 * session, retrieval) runs before the stream starts; the stream then carries the
 * answer, and `record` persists the exchange and queues its scoring.
 */
export function createAnswerService(deps: {
  access: AccessService;
  query: QueryService;
  sessions: SessionRepo;
  exchanges: ExchangeRepo;
  models: Models;
  queue: Queue | null;
  scoringUrl: string | null;
}) {
  const { query, sessions, exchanges, models } = deps;

  return {
    async prepare(caller: Caller, input: AnswerInput): Promise<Prepared> {
      if (input.sessionId) {
        // The collection's own rules first, so a stranger gets 403 whatever the session id.
        if (input.collectionId) await deps.access.requireParticipant(caller, input.collectionId);
        const owned =
          input.collectionId && isUuid(input.sessionId)
            ? await sessions.findOwned(input.collectionId, input.sessionId, caller.id)
            : undefined;
        if (!owned) throw notFound('Session');
      }
      const retrieval = await query.retrieve(caller, input);
      const prompt = buildAnswerPrompt(
        input.question,
        retrieval.sources.map((s) => ({ text: s.text, source: s.source })),
      );
      return { ...retrieval, prompt };
    },

    /**
     * The events of the contract through `send`: metadata, a token per text delta, then done,
     * or error if generation fails after the stream began. Stops when `abortSignal` fires
     * (the client left) and returns what was produced either way.
     */
    async stream(
      prepared: Prepared,
      send: (event: 'metadata' | 'token' | 'done' | 'error', data: unknown) => Promise<void>,
      abortSignal: AbortSignal,
      onFailure: (error: unknown) => void,
    ): Promise<AnswerOutcome> {
      await send('metadata', {
        sources: prepared.sources,
        embedding_latency_ms: prepared.embedding_latency_ms,
        retrieval_latency_ms: prepared.retrieval_latency_ms,
      });
      const started = performance.now();
      let answer = '';
      let firstToken: number | null = null;
      let failed = false;
      try {
        for await (const delta of models.streamAnswer({ ...prepared.prompt, abortSignal })) {
          firstToken ??= performance.now() - started;
          answer += delta;
          await send('token', { token: delta });
          if (abortSignal.aborted) break;
        }
      } catch (error) {
        failed = !abortSignal.aborted;
        if (failed) {
          onFailure(error);
          // Never the upstream's words: the contract's message only.
          await send('error', { message: 'Generation failed' });
        }
      }
      const generationMs = performance.now() - started;
      if (!failed) {
        await send('done', {
          generation_latency_ms: Math.round(generationMs),
          time_to_first_token_ms: Math.round(firstToken ?? generationMs),
        });
      }
      return { answer, generationMs, timeToFirstTokenMs: firstToken, failed };
    },

    async record(caller: Caller, input: AnswerInput, retrieval: Retrieval, outcome: AnswerOutcome, startedAt: number) {
      const evaluationId = await exchanges.record({
        collectionId: input.collectionId ?? null,
        userId: caller.id,
        sessionId: input.sessionId ?? null,
        question: input.question,
        answer: outcome.answer,
        sources: retrieval.sources,
        totalLatencyMs: Math.round(performance.now() - startedAt),
        embeddingLatencyMs: retrieval.embedding_latency_ms,
        retrievalLatencyMs: retrieval.retrieval_latency_ms,
        generationLatencyMs: Math.round(outcome.generationMs),
        timeToFirstTokenMs: outcome.timeToFirstTokenMs === null ? null : Math.round(outcome.timeToFirstTokenMs),
        engine: models.engine,
        retrievalStrategy: retrieval.strategy,
        topK: retrieval.top_k,
      });
      if (deps.queue && deps.scoringUrl) await deps.queue.publish([scoreMessage(deps.scoringUrl, evaluationId)]);
      return evaluationId;
    },
  };
}

export type AnswerService = ReturnType<typeof createAnswerService>;
