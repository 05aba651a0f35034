import type { CollectionRepo } from '#core/db/collections.ts';
import { notFound } from '#core/errors.ts';
import type { Caller } from '../auth/caller.ts';
import type { AccessService } from './access.ts';

export const RETRIEVAL_STRATEGIES = ['similarity', 'mmr', 'threshold'] as const;
export type RetrievalStrategy = (typeof RETRIEVAL_STRATEGIES)[number];

export interface RetrievalConfig {
  chunk_size: number;
  retrieval_strategy: RetrievalStrategy;
}

export const DEFAULT_CONFIG: RetrievalConfig = { chunk_size: 1000, retrieval_strategy: 'similarity' };

export function createCollectionService(deps: { collections: CollectionRepo; access: AccessService }) {
  const { collections, access } = deps;
  return {
    create: (caller: Caller, name: string) => collections.insert(caller.id, name),

    list: (caller: Caller) => collections.listVisibleTo(caller.id),

    async getConfig(caller: Caller, collectionId: string): Promise<RetrievalConfig> {
      const collection = await access.requireAdmin(caller, collectionId);
      return { ...DEFAULT_CONFIG, ...collection.config } as RetrievalConfig;
    },

    async putConfig(caller: Caller, collectionId: string, config: RetrievalConfig): Promise<RetrievalConfig> {
      await access.requireAdmin(caller, collectionId);
      const stored = await collections.replaceConfig(collectionId, { ...config });
      if (!stored) throw notFound('Collection');
      return { ...DEFAULT_CONFIG, ...stored } as RetrievalConfig;
    },
  };
}

export type CollectionService = ReturnType<typeof createCollectionService>;
