import type { Caller } from '#core/caller.ts';
import { notFound } from '#core/errors.ts';
import { namespaceFor } from '#core/namespaces.ts';
import { DEFAULT_CONFIG, type RetrievalConfig } from '#retrieval/config.ts';
import { changes } from './audit.ts';
import type { ServiceDeps } from './deps.ts';

export function createCollectionService(deps: Pick<ServiceDeps, 'collections' | 'access' | 'store' | 'vectors' | 'audit'>) {
  const { collections, access, store, vectors, audit } = deps;
  return {
    async create(caller: Caller, name: string) {
      access.requireUnrestricted(caller);
      const collection = await collections.insert(caller.id, name);
      await audit(caller, 'collection.created', { type: 'collection', id: collection.id, collectionId: collection.id }, { name });
      return collection;
    },

    /** A key restricted to one collection sees that one only. */
    async list(caller: Caller) {
      return (await collections.listVisibleTo(caller.id)).filter((collection) => access.keyAllows(caller, collection.id));
    },

    async getConfig(caller: Caller, collectionId: string): Promise<RetrievalConfig> {
      const collection = await access.requireAdmin(caller, collectionId);
      return { ...DEFAULT_CONFIG, ...collection.config } as RetrievalConfig;
    },

    /** Settings the body leaves out (the reranking ones are optional) take their defaults. */
    async putConfig(caller: Caller, collectionId: string, config: Partial<RetrievalConfig>): Promise<RetrievalConfig> {
      const collection = await access.requireAdmin(caller, collectionId);
      const stored = await collections.replaceConfig(collectionId, { ...config });
      if (!stored) throw notFound('Collection');
      const before: Record<string, unknown> = { ...DEFAULT_CONFIG, ...collection.config };
      const after: Record<string, unknown> = { ...DEFAULT_CONFIG, ...stored };
      const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])];
      await audit(
        caller,
        'collection.config_changed',
        { type: 'collection', id: collection.id, collectionId: collection.id },
        changes(before, after, fields),
      );
      return after as unknown as RetrievalConfig;
    },

    /**
     * Marked first, so that from then on nothing reaches it and an ingest step upserting into its namespace
     * takes back what it wrote; then the whole namespace and every stored object; the rows last, so that a
     * failure part-way leaves the row by which the same DELETE finishes the job.
     */
    async delete(caller: Caller, collectionId: string): Promise<string> {
      const collection = await access.requireOwner(caller, collectionId, { deleting: true });
      await collections.markDeleting(collection.id);
      await vectors.deleteNamespace(namespaceFor(collection.id, collection.user_id));
      await store.removeFolder(collection.id);
      if (!(await collections.delete(collectionId))) throw notFound('Collection');
      await audit(
        caller,
        'collection.deleted',
        { type: 'collection', id: collection.id, collectionId: collection.id },
        { name: collection.name },
      );
      return collectionId;
    },
  };
}

export type CollectionService = ReturnType<typeof createCollectionService>;
