import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWorker, startWorker } from '../../devstack/local/worker.ts';
import { freePort } from '../../devstack/ports.ts';
import { api, skipRealPostgres, stack } from '../support/client.ts';
import { evaluation, eventually, faultCounts, insertEvaluation } from '../support/faults.ts';
import { type Cast, castUsers } from '../support/fixtures.ts';
import { clearFaults, injectFault } from '../support/ingest.ts';

// The model endpoint down. Answer generation (the stream ends with `error`) and figure
// descriptions (the job ends partial) are in ingest-faults.test.ts. The deployment has no
// embedding model (sparse retrieval), so no embedding call is made to fail.
let cast: Cast;
let judge: RunningWorker;
let collectionId: string;

beforeAll(async () => {
  if (skipRealPostgres) return;
  const port = await freePort();
  // A scoring worker that judges with a chat model, as a deployment with JUDGE_MODEL does.
  const starting = startWorker({
    config: 'workers/scoring/wrangler.toml',
    port,
    vars: {
      ...stack.apiVars,
      SCORING_WORKER_URL: `http://127.0.0.1:${port}`,
      QSTASH_CURRENT_SIGNING_KEY: stack.qstashSigningKeys.current,
      QSTASH_NEXT_SIGNING_KEY: stack.qstashSigningKeys.next,
      JUDGE_MODEL: stack.apiVars.CHAT_MODEL as string,
    },
    hyperdrive: { HYPERDRIVE: stack.databaseUrl },
    persistTo: join(stack.persistDir, 'wrangler', 'scoring-judge'),
    quiet: true,
  });
  cast = await castUsers();
  const created = await api('POST', '/collections/', { token: cast.owner.token, body: { name: 'Judged' } });
  collectionId = created.body.id;
  judge = await starting;
});
afterAll(() => judge?.stop());
afterEach(() => clearFaults());

describe.skipIf(skipRealPostgres)('Model endpoint down', () => {
  it('scoring judge: every attempt fails, and the record ends with a plain scorer_error', async () => {
    const id = await insertEvaluation(collectionId, cast.owner.id);
    // Retry-After: 0, as a provider shedding load may say, keeps the SDK's own retries quick.
    await injectFault('models', { match: '/chat/completions', retryAfter: 0 });
    const published = await fetch(`${stack.qstashUrl}/v2/publish/${judge.url}/score`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${stack.qstashToken}`,
        'content-type': 'application/json',
        'upstash-retries': '3',
        'upstash-failure-callback': `${judge.url}/failures`,
      },
      body: JSON.stringify({ evaluation_id: id }),
    });
    expect(published.ok).toBe(true);
    const row = await eventually(async () => {
      const found = await evaluation(id);
      expect(found?.scored_at).not.toBeNull();
      return found;
    });
    expect((await faultCounts()).models?.failed).toBeGreaterThanOrEqual(4);
    expect(row).toMatchObject({ scorer: `judge:${stack.apiVars.CHAT_MODEL}`, scorer_error: 'Scoring failed after 4 attempts' });
    const listed = await api('GET', `/evals/${collectionId}`, { token: cast.owner.token });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toMatch(/injected|unavailable \(|HTTP 5/);
  });
});
