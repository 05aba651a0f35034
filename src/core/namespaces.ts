/**
 * Where a document's vectors and files live. A collection's namespace is its id;
 * documents ingested without a collection go to the owner's personal namespace,
 * which a query with an empty collection_id searches.
 */
export function namespaceFor(collectionId: string | null, userId: string): string {
  return collectionId ?? `personal-${userId}`;
}

/** Every object of a document sits under this Storage folder, so one purge removes them all. */
export function documentFolder(namespace: string, documentId: string): string {
  return `${namespace}/${documentId}`;
}

/** Deterministic, so a retried upsert overwrites instead of duplicating. */
export async function vectorId(documentId: string, chunkIndex: number): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`${documentId}:${chunkIndex}`));
  return [...new Uint8Array(digest).slice(0, 16)].map((b) => b.toString(16).padStart(2, '0')).join('');
}
