import { createIntake, type IngestDeps } from './intake.ts';
import { createJobs } from './jobs.ts';
import { createRechunk } from './rechunk.ts';
import { createUploadIngest } from './upload.ts';
import { createUrlIngest } from './url.ts';

export type { Accepted } from './intake.ts';

/** Ingestion, one file per operation: uploads, URLs, re-chunks and jobs, over the rules they share (intake.ts). */
export function createIngestService(deps: IngestDeps) {
  const intake = createIntake(deps);
  return {
    ...createUploadIngest(deps, intake),
    ...createUrlIngest(deps, intake),
    ...createRechunk(deps, intake),
    ...createJobs(deps, intake),
  };
}

export type IngestService = ReturnType<typeof createIngestService>;
