/**
 * What the API for programs costs a request: a bearer token against an API key, each with the rate limits
 * counted in Redis (through the devstack's Upstash REST front) and without them, on one deployment in one run.
 *
 *   npx tsx bench/query/programs.ts [--requests 400] [--rounds 5]
 *
 * Two API workers share the devstack: one with Redis settings, one without. Each round sends the same
 * number of sequential `GET /collections/` to each of the four (credential × limits) in turn, so that the
 * machine's drift falls on all four alike; the report gives the median of the rounds' p50 and p95 and each
 * one's ratio to the bearer token without limits. Prints a Markdown table.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { callApi } from '../../devstack/harness/api-call.ts';
import { signUpUser } from '../../devstack/harness/auth-client.ts';
import { startLocalDeployment, UNLIMITED_RATES } from '../../devstack/local/deployment.ts';
import { startWorker } from '../../devstack/local/worker.ts';
import { freePort } from '../../devstack/ports.ts';
import { load, machine } from '../harness/machine.ts';
import { median, percentile } from '../harness/stats.ts';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '400' }, rounds: { type: 'string', default: '5' } },
});
const REQUESTS = Number(values.requests);
const ROUNDS = Number(values.rounds);

const deployment = await startLocalDeployment({ scoring: false, vars: UNLIMITED_RATES, quiet: true });
try {
  const { stack } = deployment;
  if (!stack.redisUrl) throw new Error('The devstack has no Redis: set REDIS_URL or install redis-server');
  const { UPSTASH_REDIS_REST_URL: _url, UPSTASH_REDIS_REST_TOKEN: _token, ...withoutRedis } = deployment.apiVars;
  const unlimited = await startWorker({
    config: 'wrangler.toml',
    port: await freePort(),
    vars: withoutRedis,
    hyperdrive: { HYPERDRIVE: stack.workerDatabaseUrls.api },
    persistTo: join(deployment.dataDir, 'wrangler', 'api-without-redis'),
    quiet: true,
  });
  try {
    const user = await signUpUser({ supabaseUrl: stack.supabaseUrl, anonKey: stack.keys.anonKey }, 'bench-programs@example.com');
    const bearer = { Authorization: `Bearer ${user.token}` };
    for (const name of ['One', 'Two', 'Three']) {
      await post(deployment.api.url, '/collections/', bearer, { name });
    }
    const { key } = await post(deployment.api.url, '/keys/', bearer, { name: 'bench', scopes: ['collections:read'] });
    const apiKey = { 'X-API-Key': key };

    const cases = [
      { name: 'bearer token, no rate limits', url: unlimited.url, headers: bearer },
      { name: 'bearer token, rate limits in Redis', url: deployment.api.url, headers: bearer },
      { name: 'API key, no rate limits', url: unlimited.url, headers: apiKey },
      { name: 'API key, rate limits in Redis', url: deployment.api.url, headers: apiKey },
    ];
    // Warm each isolate, its JWKS and key caches and the database's plans.
    for (const c of cases) await timeRequests(c.url, c.headers, 50);
    const results = cases.map(() => ({ p50: [] as number[], p95: [] as number[] }));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, c] of cases.entries()) {
        const times = await timeRequests(c.url, c.headers, REQUESTS);
        results[i]?.p50.push(percentile(times, 50));
        results[i]?.p95.push(percentile(times, 95));
      }
    }

    const m = machine();
    const base = median(results[0]?.p50 ?? []);
    console.log(`\n${m.cpu}, ${m.cores} cores, ${m.memGiB.toFixed(0)} GiB, Node ${m.node}; load ${load().join(' ')}`);
    console.log(`${ROUNDS} rounds × ${REQUESTS} sequential GET /collections/ per case (3 collections)\n`);
    console.log('| credential, limits | p50 ms | p95 ms | p50 vs bearer without limits |');
    console.log('| --- | --: | --: | --: |');
    for (const [i, c] of cases.entries()) {
      const p50 = median(results[i]?.p50 ?? []);
      const p95 = median(results[i]?.p95 ?? []);
      console.log(`| ${c.name} | ${p50.toFixed(2)} | ${p95.toFixed(2)} | ${(p50 / base).toFixed(2)} |`);
    }
  } finally {
    await unlimited.stop();
  }
} finally {
  await deployment.stop();
}

async function post<P extends string>(base: string, path: P, headers: Record<string, string>, body: unknown) {
  const response = await callApi(base, 'POST', path, { headers, body });
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** Milliseconds per request, one after another; every answer must be a 200. */
async function timeRequests(base: string, headers: Record<string, string>, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await fetch(`${base}/collections/`, { headers });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`GET /collections/: ${response.status}`);
    times.push(performance.now() - started);
  }
  return times;
}
