import { DEFAULT_CONFIG } from '#retrieval/config.ts';
import type { Sql } from './client.ts';
import type { DocumentRow } from './documents.ts';

/** The documents a source's pages became, as its crawl reads and keeps them. */
export function createSourceDocumentRepo(sql: Sql) {
  return {
    /** The page's live document (the newest, should a new version be on its way). */
    async current(sourceId: string, url: string): Promise<DocumentRow | undefined> {
      const [row] = await sql<DocumentRow[]>`
        select * from documents where source_id = ${sourceId} and source_url = ${url} and deleting_at is null
         order by created_at desc limit 1`;
      return row;
    },

    /** Every live document of these pages, for removal. */
    ofPages(sourceId: string, urls: string[]): Promise<DocumentRow[]> {
      return sql<DocumentRow[]>`
        select * from documents where source_id = ${sourceId} and source_url in (select value from jsonb_array_elements_text(${sql.json(urls)})) and deleting_at is null`;
    },

    /** Fetched again and found unchanged. */
    async touch(documentIds: string[]): Promise<void> {
      if (documentIds.length === 0) return;
      await sql`update documents set fetched_at = now() where id in (select value::uuid from jsonb_array_elements_text(${sql.json(documentIds)}))`;
    },

    /** The chunk size new documents of the place are cut at. */
    async chunkSize(collectionId: string | null): Promise<number> {
      if (!collectionId) return DEFAULT_CONFIG.chunk_size;
      const [row] = await sql<{ size: number | null }[]>`
        select (config ->> 'chunk_size')::int as size from collections where id = ${collectionId}`;
      return row?.size ?? DEFAULT_CONFIG.chunk_size;
    },
  };
}

export type SourceDocumentRepo = ReturnType<typeof createSourceDocumentRepo>;
