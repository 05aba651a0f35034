import type { Caller } from '#core/caller.ts';
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
  };
}

const viewerOf = (caller: Caller) => ({ userId: caller.id, restricted: caller.key?.collectionId != null });

export type EvalService = ReturnType<typeof createEvalService>;
