import { useQuery } from '@tanstack/preact-query';
import { call, rag, type Schema } from './api.ts';

export type Listed = Schema<'ListedCollection'>;

/** The collections the caller owns or was given, as the sidebar, the ask box and the pages share them. */
export const useCollections = () => useQuery({ queryKey: ['collections'], queryFn: () => call(rag.GET('/collections')) });

/** A collection's chats, newest first as the API lists them. */
export const useSessions = (collectionId: string, enabled = true) =>
  useQuery({
    queryKey: ['sessions', collectionId],
    queryFn: () => call(rag.GET('/chat/{collection_id}/sessions', { params: { path: { collection_id: collectionId } } })),
    enabled,
  });

/** Owners and members with the ingest permission may add, change and remove documents. */
export const canWrite = (collection: Listed | undefined) =>
  collection !== undefined && (!collection.shared || collection.permission === 'ingest');

export const chatTitle = (session: { title: string | null }) => session.title ?? 'Untitled chat';
