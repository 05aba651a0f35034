import type { Caller } from '#core/caller.ts';
import type { Feedback } from '#core/db/evaluations.ts';
import { notFound } from '#core/errors.ts';
import type { ServiceDeps } from './deps.ts';

/** Evaluations are the collection's, not the asker's: every participant sees every query. */
export function createEvalService(deps: Pick<ServiceDeps, 'access' | 'evaluations'>) {
  const { access, evaluations } = deps;
  return {
    async list(caller: Caller, collectionId: string, page: { limit: number; offset: number }) {
      const { collection } = await access.requireParticipant(caller, collectionId);
      return evaluations.list(collection.id, viewerOf(caller), page);
    },

    async stats(caller: Caller, collectionId: string) {
      const { collection } = await access.requireParticipant(caller, collectionId);
      return evaluations.stats(collection.id, viewerOf(caller));
    },

    /**
     * The asker's rating of their own answer, which every participant then sees on its record. Anyone else's answer
     * does not exist (404); a key restricted to one collection rates only answers asked there alone (403).
     */
    async rate(caller: Caller, evaluationId: string, rating: { feedback: Feedback | null; comment: string | null }) {
      const answer = await evaluations.answerOf(evaluationId, caller.id);
      if (!answer) throw notFound('Answer');
      access.requireKeyReaches(caller, answer.collection_ids);
      const rated = await evaluations.setFeedback(evaluationId, caller.id, rating);
      if (!rated) throw notFound('Answer');
      return rated;
    },
  };
}

const viewerOf = (caller: Caller) => ({ userId: caller.id, restricted: caller.key?.collectionId != null });

export type EvalService = ReturnType<typeof createEvalService>;
