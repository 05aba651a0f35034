import type { JobRepo } from '#core/db/jobs.ts';
import type { SourceDocumentRepo } from '#core/db/source-documents.ts';
import type { PageRepo } from '#core/db/source-pages.ts';
import type { RunRepo } from '#core/db/source-runs.ts';
import type { SourceRepo } from '#core/db/sources.ts';
import type { FetchedPage } from '../guarded-fetch.ts';
import type { PipelineDeps } from '../pipeline/deps.ts';
import type { Politeness } from './polite.ts';

/** A crawl step's fetch: the SSRF-guarded fetch, with a crawl's headers and its rule for every hop. */
export type FetchPage = (
  url: string,
  options: { headers?: Record<string, string>; checkHop?: (url: URL) => string | null },
) => Promise<FetchedPage>;

export interface CrawlDeps extends PipelineDeps {
  sources: SourceRepo;
  runs: RunRepo;
  pages: PageRepo;
  sourceDocuments: SourceDocumentRepo;
  jobs: Pick<JobRepo, 'insertWithDocument' | 'delete'>;
  /** Chunks the user's documents made today, against `quota.perDay`. */
  usedToday: (userId: string) => Promise<number>;
  fetchPage: FetchPage;
  politeness: Politeness;
  /** Pages fetched per step. */
  pagesPerStep: number;
}
