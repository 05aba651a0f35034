import type { Models, ModelUsage } from '#core/adapters/models.ts';
import type { Queue } from '#core/adapters/queue.ts';
import type { Caller } from '#core/caller.ts';
import { isUuid } from '#core/db/client.ts';
import type { ExchangeRepo } from '#core/db/exchanges.ts';
import type { SessionRepo } from '#core/db/sessions.ts';
import { usageRows } from '#core/db/usage.ts';
import { notFound } from '#core/errors.ts';
import type { Logger } from '#core/log.ts';
import { scoreMessage } from '#core/messages/scoring.ts';
import { type AnswerPrompt, buildAnswerPrompt } from './answer-prompt.ts';
import { HISTORY_TURNS, type HistoryMessage, historyMessages, turnsOf } from './conversation.ts';
import type { FilterNode } from './filter.ts';
import { passageJson, type Retrieval, type RetrievalService, type RetrievedPassage } from './retrieval.ts';
import { recordedScope } from './scopes.ts';

export interface AskInput {
  question: string;
  /** The collections to search, in the order asked; none for the caller's personal space. */
  collectionIds: readonly string[];
  sessionId?: string;
  topK: number;
  /** Rerank for this question; unset: as the collections say (rerank.ts). */
  rerank?: boolean;
  /** Only passages of the documents it selects (filter.ts). */
  filter?: FilterNode;
}

/** The contract's events, in order: metadata, a token per text delta, then done, or error if generation failed. */
export type AnswerEvent =
  | {
      type: 'metadata';
      passages: RetrievedPassage[];
      embeddingLatencyMs: number;
      retrievalLatencyMs: number;
      rerank: Retrieval['rerank'];
    }
  | { type: 'token'; token: string }
  /** `evaluationId` names the recorded answer (to rate it); null when recording it failed. */
  | { type: 'done'; generationLatencyMs: number; timeToFirstTokenMs: number; evaluationId: string | null }
  /** `message` is the contract's; `cause` is for the log, never for the client. */
  | { type: 'error'; message: string; cause: unknown };

export interface AnswerStream extends AsyncIterable<AnswerEvent> {
  /**
   * Settles once the events have ended (finished, failed or aborted) and the exchange is
   * recorded with its scoring queued; rejects if recording fails. Read the events once.
   */
  readonly recorded: Promise<void>;
}

interface Outcome {
  answer: string;
  generationMs: number;
  timeToFirstTokenMs: number | null;
  /** The answer's model usage as its stream reported it (none when the stream failed before its end). */
  usage: ModelUsage[];
}

export function createAnswerService(deps: {
  retrieval: RetrievalService;
  sessions: SessionRepo;
  exchanges: ExchangeRepo;
  models: Models;
  queue: Queue | null;
  scoringUrl: string | null;
  /** False: model usage is not recorded (USAGE_RECORDING=off). */
  recordUsage: boolean;
}) {
  const { retrieval, sessions, exchanges, models } = deps;

  /**
   * The caller's own session, which lives in one of the asked collections, with its latest exchanges;
   * anyone else's session does not exist. A session lives in one collection and may search others.
   */
  async function conversation(caller: Caller, collectionIds: readonly string[], sessionId: string) {
    const owned = isUuid(sessionId) ? await sessions.findOwnedIn(collectionIds, sessionId, caller.id) : undefined;
    if (!owned) throw notFound('Session');
    return { home: owned.collection_id, turns: turnsOf(await sessions.recentMessages(sessionId, HISTORY_TURNS * 2)) };
  }

  /**
   * The events of one answer. Generation stops when `signal` fires (the client left); the
   * exchange is recorded with what was produced either way.
   */
  function answerEvents(
    prompt: AnswerPrompt & { history: HistoryMessage[] },
    found: Retrieval,
    signal: AbortSignal,
    answer: {
      evaluationId: string;
      record: (outcome: Outcome) => Promise<void>;
    },
  ): AnswerStream {
    let settle!: (recording: Promise<void>) => void;
    const recorded = new Promise<void>((resolve) => (settle = resolve));
    let recording: Promise<void> | undefined;
    const recordOnce = (outcome: Outcome) => {
      recording ??= answer.record(outcome);
      return recording;
    };

    async function* events(): AsyncGenerator<AnswerEvent> {
      let started = performance.now();
      let text = '';
      let firstToken: number | null = null;
      let generationMs: number | undefined;
      const usage: ModelUsage[] = [];
      const onUsage = (u: ModelUsage) => usage.push(u);
      try {
        const { passages, embeddingLatencyMs, retrievalLatencyMs, rerank } = found;
        yield { type: 'metadata', passages, embeddingLatencyMs, retrievalLatencyMs, rerank };
        started = performance.now();
        let failed = false;
        try {
          for await (const delta of models.streamAnswer({ ...prompt, abortSignal: signal, onUsage })) {
            firstToken ??= performance.now() - started;
            text += delta;
            yield { type: 'token', token: delta };
            if (signal.aborted) break;
          }
        } catch (error) {
          failed = !signal.aborted;
          // Never the upstream's words: the contract's message only.
          if (failed) yield { type: 'error', message: 'Generation failed', cause: error };
        }
        generationMs = performance.now() - started;
        if (!failed) {
          // Recorded before `done`, so that the answer `done` names can be rated at once. A failure is the
          // route's to log (through `recorded`); the answer itself stands.
          const saved = await recordOnce({ answer: text, generationMs, timeToFirstTokenMs: firstToken, usage }).then(
            () => true,
            () => false,
          );
          yield {
            type: 'done',
            generationLatencyMs: Math.round(generationMs),
            timeToFirstTokenMs: Math.round(firstToken ?? generationMs),
            evaluationId: saved ? answer.evaluationId : null,
          };
        }
      } finally {
        settle(
          recordOnce({
            answer: text,
            generationMs: generationMs ?? performance.now() - started,
            timeToFirstTokenMs: firstToken,
            usage,
          }),
        );
      }
    }

    return { [Symbol.asyncIterator]: events, recorded };
  }

  return {
    /**
     * Everything that can refuse the question (the collection, the session, retrieval)
     * runs before this returns; the answer then streams as the contract's events.
     */
    async ask(caller: Caller, input: AskInput, options: { signal: AbortSignal; log: Logger }): Promise<AnswerStream> {
      const startedAt = performance.now();
      // The collection's own rules first, so a stranger gets 403 whatever the session id.
      const scope = await retrieval.scope(caller, input.collectionIds);
      const searched = scope.collections.map((c) => c.id);
      const session = input.sessionId ? await conversation(caller, searched, input.sessionId) : undefined;
      const turns = session?.turns ?? [];
      const found = await retrieval.search(scope, { ...input, turns });
      const prompt = buildAnswerPrompt(
        input.question,
        found.passages.map((p) => ({
          text: p.text,
          source: p.documentName,
          ...(typeof p.page === 'number' ? { page: p.page } : {}),
          ...(p.heading ? { heading: p.heading } : {}),
          ...(p.context ? { context: p.context } : {}),
        })),
      );

      const evaluationId = crypto.randomUUID();
      const recorded = recordedScope(scope, session?.home);
      // The question's embedding and reranking, and the answer's tokens, kept with the answer's record.
      const usageOf = (answerUsage: ModelUsage[]) =>
        deps.recordUsage
          ? usageRows(
              {
                userId: caller.id,
                apiKeyId: caller.key?.id ?? null,
                collectionId: recorded.collectionId,
                requestId: options.log.requestId,
                evaluationId,
                purpose: 'query',
              },
              [...found.usage, ...answerUsage],
            )
          : [];
      const record = async (outcome: Outcome) => {
        await exchanges.record({
          id: evaluationId,
          ...recorded,
          userId: caller.id,
          sessionId: input.sessionId ?? null,
          question: input.question,
          answer: outcome.answer,
          sources: found.passages.map(passageJson),
          totalLatencyMs: Math.round(performance.now() - startedAt),
          embeddingLatencyMs: found.embeddingLatencyMs,
          retrievalLatencyMs: found.retrievalLatencyMs,
          rerankLatencyMs: found.rerank.latencyMs,
          generationLatencyMs: Math.round(outcome.generationMs),
          timeToFirstTokenMs: outcome.timeToFirstTokenMs === null ? null : Math.round(outcome.timeToFirstTokenMs),
          engine: models.engine,
          retrievalStrategy: found.strategy,
          topK: found.topK,
          usage: usageOf(outcome.usage),
        });
        if (deps.queue && deps.scoringUrl) await deps.queue.publish([scoreMessage(deps.scoringUrl, evaluationId)]);
      };
      return answerEvents({ ...prompt, history: historyMessages(turns) }, found, options.signal, {
        evaluationId,
        record,
      });
    },
  };
}

export type AnswerService = ReturnType<typeof createAnswerService>;
