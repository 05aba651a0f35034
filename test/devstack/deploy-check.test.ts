import { mkdtempSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult } from '../../deploy/check-result.ts';
import { runChecks } from '../../deploy/checks.ts';
import { checkQStashAccount } from '../../deploy/qstash-regions.ts';
import { removeSecrets } from '../../deploy/secrets.ts';
import { parseEnvFile } from '../../deploy/settings.ts';
import { localWrangler } from '../../deploy/wrangler.ts';
import { freePort } from '../../devstack/ports.ts';
import { migrate } from '../../devstack/postgres/migrate.ts';
import { createPostgresServer, type RunningPostgres } from '../../devstack/postgres/server.ts';
import { createQStashServer, type QStash } from '../../devstack/qstash/server.ts';
import { FAKE_ACCOUNT_ID, type FakeCloudflareApi, startFakeCloudflareApi } from '../support/fake-cloudflare-api.ts';

// `npm run deploy -- --check` as it runs: the real wrangler, answered by a stand-in of the Cloudflare API
// on loopback, the devstack's QStash in place of the region's (which it is reached as), and the devstack's
// database, migrated, as DATABASE_URL.
const root = new URL('../../', import.meta.url).pathname;
const US = 'https://qstash-us-east-1.upstash.io';
const id = 'abcdef0123456789abcdef0123456789';
const keys = {
  token: 'qstash-check-token',
  current: 'sig_checkCurrent000000000000000000',
  next: 'sig_checkNext000000000000000000000',
};
let api: FakeCloudflareApi;
let qstash: QStash;
let qstashServer: Server;
let qstashBase: string;
let database: RunningPostgres;

beforeAll(async () => {
  database = await createPostgresServer({ host: '127.0.0.1', port: await freePort() });
  const sql = postgres(database.url, { max: 1, prepare: false, onnotice: () => {} });
  await migrate(sql);
  await sql.end();
  api = await startFakeCloudflareApi();
  qstash = createQStashServer({ token: keys.token, currentSigningKey: keys.current, nextSigningKey: keys.next });
  const app = new Hono().route('/qstash', qstash.app);
  qstashServer = await new Promise<Server>((resolve) => {
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(server as Server));
  });
  qstashBase = `http://127.0.0.1:${(qstashServer.address() as { port: number }).port}/qstash`;
});

afterAll(async () => {
  await api?.stop();
  await qstash?.stop();
  qstashServer?.close();
  await database?.stop();
});

/** The region's URL, answered on loopback. */
const toDevstack: typeof fetch = (input, init) => fetch(String(input).replace(US, qstashBase), init);

function wrangler() {
  const home = mkdtempSync(join(tmpdir(), 'wrangler-home-'));
  return localWrangler(root, {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    WRANGLER_SEND_METRICS: 'false',
    CLOUDFLARE_API_BASE_URL: api.baseUrl,
    CLOUDFLARE_API_TOKEN: 'fake-token',
    CLOUDFLARE_ACCOUNT_ID: FAKE_ACCOUNT_ID,
  });
}

/** .dev.vars.example filled in for the US region, the stand-ins' keys and a real-looking Hyperdrive id. */
const settings = () => ({
  ...parseEnvFile(readFileSync(join(root, '.dev.vars.example'), 'utf8')),
  HYPERDRIVE_ID: id,
  QSTASH_URL: US,
  QSTASH_TOKEN: keys.token,
  QSTASH_CURRENT_SIGNING_KEY: keys.current,
  QSTASH_NEXT_SIGNING_KEY: keys.next,
  CORS_ORIGINS: 'https://app.example.com',
});

const find = (results: CheckResult[], subject: string) => results.find((result) => result.subject.startsWith(subject));

describe('npm run deploy -- --check, against the accounts', () => {
  it('refuses a caching Hyperdrive, lists the secrets a deploy would remove and asks QStash about the token and keys', async () => {
    const all = settings();
    api.hyperdrive.set(id, { name: 'rag-db' });
    api.secrets.set('rag-api', ['CORS_ORIGINS', 'OLD_SETTING', 'OPENAI_API_KEY']);
    api.secrets.set('rag-ingest', ['OPENAI_API_KEY']);

    const { results, held } = await runChecks({
      mode: 'check',
      root,
      all,
      wrangler: wrangler(),
      fetcher: toDevstack,
      databaseUrl: database.url,
    });

    expect(find(results, `Hyperdrive ${id}`)).toMatchObject({ status: 'fail' });
    expect(find(results, 'QSTASH_URL')).toMatchObject({ status: 'pass', message: expect.stringContaining('the US region') });
    expect(find(results, 'QStash account')).toMatchObject({ status: 'pass' });
    expect(find(results, 'database migrations')).toMatchObject({ status: 'pass' });
    expect(find(results, 'api worker secrets')?.message).toContain('the deploy removes CORS_ORIGINS, OLD_SETTING');
    expect(find(results, 'ingest worker secrets')?.message).toContain('none of its secrets would be removed');
    // Never deployed: nothing to remove.
    expect(held.get('scoring')).toEqual([]);
    expect(results.filter((result) => result.status === 'fail').map((result) => result.subject)).toEqual([
      `Hyperdrive ${id} (rag-db)`,
    ]);
  }, 180_000);

  it('passes the same settings once caching is disabled, with nothing left unchecked', async () => {
    api.hyperdrive.set(id, { name: 'rag-db', caching: { disabled: true } });
    const { results } = await runChecks({
      mode: 'check',
      root,
      all: settings(),
      wrangler: wrangler(),
      fetcher: toDevstack,
      databaseUrl: database.url,
    });
    expect(results.filter((result) => result.status === 'fail' || result.status === 'unchecked')).toEqual([]);
    expect(find(results, `Hyperdrive ${id}`)).toMatchObject({ status: 'pass', message: 'query caching is disabled' });
  }, 180_000);

  it("refuses a token QStash does not take, and keys it does not sign with; warns when only its next key is another's", async () => {
    const account = { url: US, token: keys.token, currentSigningKey: keys.current, nextSigningKey: keys.next };
    expect(await checkQStashAccount({ ...account, token: 'another-region' }, toDevstack)).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('refused QSTASH_TOKEN'),
    });
    expect(
      await checkQStashAccount({ ...account, currentSigningKey: 'sig_a', nextSigningKey: 'sig_b' }, toDevstack),
    ).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('would refuse every delivery'),
    });
    // After one rotation QStash signs with the old next key: deliveries still verify, the next rotation would break them.
    await toDevstack(`${US}/v2/keys/rotate`, { method: 'POST', headers: { Authorization: `Bearer ${keys.token}` } });
    expect(await checkQStashAccount(account, toDevstack)).toMatchObject({ status: 'warn' });
    expect(await checkQStashAccount({ ...account, url: 'https://127.0.0.1:9' })).toMatchObject({ status: 'unchecked' });
  });

  it('removes secrets in one `wrangler secret bulk` request', async () => {
    api.secrets.set('rag-scoring', ['JUDGE_API_KEY', 'OPENAI_API_KEY', 'QSTASH_TOKEN']);
    const before = api.requests.length;
    const dir = mkdtempSync(join(tmpdir(), 'deploy-'));
    expect(await removeSecrets(wrangler(), 'workers/scoring/wrangler.toml', ['JUDGE_API_KEY', 'QSTASH_TOKEN'], dir)).toBe(true);
    expect(api.secrets.get('rag-scoring')).toEqual(['OPENAI_API_KEY']);
    expect(api.requests.slice(before)).toEqual([
      `PATCH /client/v4/accounts/${FAKE_ACCOUNT_ID}/workers/scripts/rag-scoring/secrets-bulk`,
    ]);
    expect(readFileSync(join(dir, 'secrets-removed.json'), 'utf8')).toBe('{"JUDGE_API_KEY":null,"QSTASH_TOKEN":null}');
  }, 60_000);
});
