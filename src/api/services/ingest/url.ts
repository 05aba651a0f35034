import type { Caller } from '#core/caller.ts';
import { invalid } from '#core/errors.ts';
import type { DocumentMetadata } from '#retrieval/document-facets.ts';
import type { Accepted, IngestDeps, Intake } from './intake.ts';

export function createUrlIngest(deps: Pick<IngestDeps, 'checkUrl'>, intake: Intake) {
  return {
    /** A web page is fetched by the worker, so its bytes are not known here: URLs are never duplicates. */
    async ingestUrl(
      caller: Caller,
      collectionId: string | undefined,
      url: string,
      replaces?: string,
      metadata?: DocumentMetadata,
    ): Promise<Accepted> {
      intake.requireQueue();
      const place = await intake.target(caller, collectionId, replaces);
      await intake.requireQuota(caller);
      const verdict = await deps.checkUrl(url);
      if (!verdict.ok) throw invalid('url', verdict.reason, 'url_refused');
      const href = verdict.url.href;
      return intake.enqueue(
        caller,
        {
          id: crypto.randomUUID(),
          collection_id: place.collectionId,
          user_id: caller.id,
          name: href,
          source_kind: 'url',
          source_url: href,
          // Known once the worker has fetched it.
          content_type: 'text/html',
          doc_type: null,
          size_bytes: 0,
          storage_path: null,
          chunk_size: place.chunkSize,
          metadata: metadata ?? place.inherited ?? {},
        },
        place.replaces,
      );
    },
  };
}
