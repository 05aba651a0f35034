import type { Caller } from '#core/caller.ts';
import type { CollectionRow } from '#core/db/collections.ts';
import { namespaceFor } from '#core/namespaces.ts';
import { DEFAULT_CONFIG, type RetrievalStrategy } from './config.ts';

/** A namespace a question searches: a collection's, or the caller's personal space (`collectionId` null). */
export interface SearchedNamespace {
  namespace: string;
  collectionId: string | null;
}

/** Where a caller's question is searched: one or more collections' namespaces, or their personal space. */
export interface RetrievalScope {
  /** In the order the request named them; one for `collection_id` or the personal space. */
  namespaces: readonly SearchedNamespace[];
  /** The collections searched, as `namespaces` (none for the personal space): their settings. */
  collections: readonly CollectionRow[];
  strategy: RetrievalStrategy;
}

/** The access rules retrieval asks of the API (its access service): who may search where. */
export interface SearchAccess {
  /** The personal space: not for an API key restricted to one collection. */
  requireUnrestricted(caller: Caller): void;
  /** The owner or a member of the collection; 404 or 403 otherwise. */
  requireParticipant(caller: Caller, collectionId: string): Promise<{ collection: CollectionRow }>;
}

/**
 * The scope of a question over `collectionIds` (none: the caller's personal space). Every collection
 * is checked, at once; when several refuse, the first the request named answers (404 for one that does
 * not exist, 403 for one the caller may not use or outside the key's restriction), so the status does
 * not depend on which check ends first.
 */
export async function resolveScope(
  access: SearchAccess,
  caller: Caller,
  collectionIds: readonly string[],
): Promise<RetrievalScope> {
  if (collectionIds.length === 0) {
    access.requireUnrestricted(caller);
    return {
      namespaces: [{ namespace: namespaceFor(null, caller.id), collectionId: null }],
      collections: [],
      strategy: DEFAULT_CONFIG.retrieval_strategy,
    };
  }
  const checks = await Promise.allSettled(collectionIds.map((id) => access.requireParticipant(caller, id)));
  const refused = checks.find((check) => check.status === 'rejected');
  if (refused) throw refused.reason;
  const collections = checks.flatMap((check) => (check.status === 'fulfilled' ? [check.value.collection] : []));
  return {
    namespaces: collections.map((c) => ({ namespace: namespaceFor(c.id, c.user_id), collectionId: c.id })),
    collections,
    strategy: sharedStrategy(collections),
  };
}

/**
 * The strategy of a question over several collections: theirs when they all have the same, else
 * `similarity`, the plain ranking, which assumes nothing about any of them.
 */
function sharedStrategy(collections: readonly CollectionRow[]): RetrievalStrategy {
  const strategies = new Set(
    collections.map((c) => (c.config.retrieval_strategy as RetrievalStrategy | undefined) ?? DEFAULT_CONFIG.retrieval_strategy),
  );
  const [only] = strategies;
  return strategies.size === 1 && only ? only : 'similarity';
}

/** The collection a passage came from, by the namespace it was found in; a single namespace's when untold. */
export function collectionOf(scope: RetrievalScope, namespace: string | undefined): string | null {
  const found = scope.namespaces.find((n) => n.namespace === namespace) ?? scope.namespaces[0];
  return found?.collectionId ?? null;
}

/**
 * Where an exchange is recorded: under its session's collection when it has one, else the first searched
 * (null for the personal space), with every collection searched.
 */
export function recordedScope(scope: RetrievalScope, sessionCollection: string | undefined) {
  const collectionIds = scope.collections.map((c) => c.id);
  return { collectionId: sessionCollection ?? collectionIds[0] ?? null, collectionIds };
}
