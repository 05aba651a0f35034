import type { Queue } from '../adapters/queue.ts';
import type { RunRepo, RunRow, RunTrigger } from '../db/source-runs.ts';
import type { SourceRow } from '../db/sources.ts';
import { crawlMessage } from '../messages/crawl.ts';
import { normalizeUrl } from './urls.ts';

/**
 * Starts a sync of the source: its run row with the start URL as the frontier, then the first step's
 * message. Undefined while a sync of it is running. If the message cannot be queued the run is ended
 * failed, saying so, rather than left running with nothing to move it. The API key that asked for it (none for
 * a schedule) goes to the jobs of the pages it adds or changes, and so to their usage rows.
 */
export async function startRun(
  deps: { runs: RunRepo; queue: Queue; workerUrl: string },
  source: Pick<SourceRow, 'id' | 'url'>,
  trigger: RunTrigger,
  apiKeyId: string | null = null,
): Promise<RunRow | undefined> {
  const seed = normalizeUrl(source.url) ?? source.url;
  const run = await deps.runs.start(source, seed, trigger, apiKeyId);
  if (!run) return undefined;
  try {
    await deps.queue.publish([crawlMessage(deps.workerUrl, { run_id: run.id, step: 1 })]);
  } catch (error) {
    await deps.runs.finish(run.id, { status: 'failed', message: 'The sync could not be queued; try again' });
    throw error;
  }
  return run;
}
