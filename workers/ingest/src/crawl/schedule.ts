import { crawlMessage } from '#core/messages/crawl.ts';
import { startRun } from '#core/sources/start-run.ts';
import type { CrawlDeps } from './deps.ts';

const BATCH = 50;
/** A running sync no step has moved for this long lost its message (an outage past QStash's retries). */
const STALE_RUN_MINUTES = 30;

/**
 * The cron's part in sources: each scheduled source that is due gets a sync (its next one is set a period on
 * as it is claimed, so a source still syncing is simply skipped until then), and a sync whose step message was
 * lost gets its step queued again.
 */
export async function syncDueSources(deps: CrawlDeps) {
  let started = 0;
  for (const source of await deps.sources.claimDue(BATCH)) {
    try {
      if (await startRun(deps, source, 'schedule')) started++;
    } catch (error) {
      deps.log.error('scheduled_sync_failed', error, { source_id: source.id });
    }
  }
  const stale = await deps.runs.stale(STALE_RUN_MINUTES, BATCH);
  for (const run of stale) await deps.runs.touch(run.id);
  if (stale.length > 0) {
    await deps.queue.publish(stale.map((run) => crawlMessage(deps.workerUrl, { run_id: run.id, step: run.step }, Date.now())));
  }
  if (started + stale.length > 0) deps.log.info('sweep_syncs', { started, resumed: stale.length });
  return { syncs: started, resumed: stale.length };
}
