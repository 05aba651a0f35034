import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createQueue } from '#core/adapters/queue.ts';
import { createRunRepo } from '#core/db/source-runs.ts';
import { startRun } from '#core/sources/start-run.ts';
import { type RunningWorker, startWorker } from '../../devstack/local/worker.ts';
import { freePort } from '../../devstack/ports.ts';
import { api, db, signUp, stack, type TestUser } from '../support/client.ts';
import { startSite, type TestSite } from '../support/site-server.ts';
import { untilIngested, waitForSync } from '../support/sources.ts';

/**
 * A crawl survives its worker being restarted: an ingest worker of this file's own, reached through a
 * proxy that holds connections while no worker listens (as a platform does while it replaces one), is
 * killed in the middle of a sync and started again. QStash redelivers the step that was cut off; the
 * run's state is in Postgres, so the new worker goes on from the pages already settled.
 */
let owner: TestUser;
let site: TestSite;
let proxy: HoldingProxy;
let worker: RunningWorker | undefined;
const PAGES = 30;

beforeAll(async () => {
  owner = await signUp('restart');
  site = await startSite(stack.restartSiteUrl);
  proxy = await holdingProxy();
});

afterAll(async () => {
  await worker?.stop();
  await proxy?.close();
  await site?.stop();
});

function startIngestWorker(): Promise<RunningWorker> {
  return startWorker({
    config: 'workers/ingest/wrangler.toml',
    port: proxy.backendPort,
    vars: { ...stack.ingestVars, INGEST_WORKER_URL: proxy.url },
    hyperdrive: { HYPERDRIVE: stack.workerDatabaseUrls.ingest },
    persistTo: join(tmpdir(), `restart-ingest-${process.pid}`),
    quiet: true,
  });
}

it('goes on from where it was when its worker is killed mid-sync and started again, fetching no page twice', async () => {
  const links = Array.from({ length: PAGES }, (_, i) => `/site/p${i}`);
  site.set('/site/', { title: 'Index', links });
  for (const [i, href] of links.entries()) {
    site.set(href, { title: `Restart page ${i}`, text: `The lighthouse numbered ${i} stands on cape ${i}.`, delayMs: 150 });
  }
  worker = await startIngestWorker();
  const created = await api('POST', '/collections', { token: owner.token, body: { name: 'Restart' } });
  const [source] = await db()<{ id: string; url: string }[]>`
    insert into sources (user_id, collection_id, kind, url) values (${owner.id}, ${created.body.id}, 'site', ${site.url('/site/')})
    returning id, url`;
  if (!source) throw new Error('no source');
  const queue = createQueue({ url: stack.qstashUrl, token: stack.qstashToken });
  await startRun({ runs: createRunRepo(db()), queue, workerUrl: proxy.url }, source, 'manual');

  // Killed once a third of the pages are settled, while a step is fetching the next.
  await until(async () => (await settled(source.id)) >= PAGES / 3);
  proxy.hold();
  await worker.stop();
  // Killed in the middle: pages are left, and the run is still going with no worker to move it.
  expect(await settled(source.id)).toBeLessThan(PAGES + 1);
  const [mid] = await db()<{ status: string }[]>`select status from source_runs where source_id = ${source.id}`;
  expect(mid?.status).toBe('running');
  worker = await startIngestWorker();
  proxy.release();

  const run = await waitForSync(owner.token, source.id, { timeoutMs: 120_000 });
  expect(run.status, JSON.stringify(run)).toBe('succeeded');
  expect(run.counts).toMatchObject({ found: PAGES + 1, added: PAGES + 1, failed: 0 });
  // No page was fetched twice, save the one the kill may have cut off mid-answer.
  const fetches = links.map((href) => site.requests(href).length);
  expect(fetches.filter((n) => n > 1).length).toBeLessThanOrEqual(proxy.cut);
  expect(Math.max(...fetches)).toBeLessThanOrEqual(2);
  await untilIngested(owner.token);
  const documents = await api('GET', `/collections/${created.body.id}/documents`, { token: owner.token });
  expect(documents.body.filter((doc) => doc.source_id === source.id)).toHaveLength(PAGES + 1);
});

async function settled(sourceId: string): Promise<number> {
  const [row] = await db()<{ n: number }[]>`
    select count(*)::int as n from source_pages where source_id = ${sourceId} and state <> 'pending'`;
  return row?.n ?? 0;
}

async function until(check: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface HoldingProxy {
  /** The worker's public URL: QStash delivers here. */
  url: string;
  /** Where the worker itself listens. */
  backendPort: number;
  /** From now on new connections wait; those open are cut when the worker stops. */
  hold(): void;
  release(): void;
  /** Connections that were open when the worker stopped. */
  cut: number;
  close(): Promise<void>;
}

async function holdingProxy(): Promise<HoldingProxy> {
  const backendPort = await freePort();
  let holding = false;
  const waiting: (() => void)[] = [];
  const open = new Set<Socket>();
  const state = { cut: 0 };
  const server: Server = createServer((client) => {
    const pass = () => {
      const upstream = tcpConnect(backendPort, '127.0.0.1');
      open.add(upstream);
      client.pipe(upstream).pipe(client);
      const drop = () => {
        if (open.delete(upstream) && holding) state.cut++;
        client.destroy();
        upstream.destroy();
      };
      upstream.on('error', drop).on('close', drop);
      client.on('error', drop).on('close', () => {
        open.delete(upstream);
        upstream.destroy();
      });
    };
    if (holding) waiting.push(pass);
    else pass();
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    backendPort,
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      for (const pass of waiting.splice(0)) pass();
    },
    get cut() {
      return state.cut;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
