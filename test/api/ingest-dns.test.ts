import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adaptersFor } from '#core/adapters/index.ts';
import { connect } from '#core/db/client.ts';
import { createPipelineDb } from '#core/db/ingest-pipeline.ts';
import { createQuotaRepo } from '#core/db/ingest-quota.ts';
import { createDeliveryRepo } from '#core/db/webhook-deliveries.ts';
import { DAILY_INGEST_CHUNKS, MAX_DOCUMENT_BYTES } from '#core/limits.ts';
import { createLogger } from '#core/log.ts';
import { RetryLater } from '#core/qstash/worker-shell.ts';
import { createResolver } from '#core/urls/dns.ts';
import { FetchFailed, guardedFetch } from '../../workers/ingest/src/guarded-fetch.ts';
import type { PipelineDeps } from '../../workers/ingest/src/pipeline/deps.ts';
import { DEFAULT_DOCUMENT_BUDGET } from '../../workers/ingest/src/pipeline/read-range.ts';
import { runStep } from '../../workers/ingest/src/steps.ts';
import { api, signUp, stack, type TestUser } from '../support/client.ts';
import { chunkRows, documentOfJob, queuedUrlJob, waitForJob } from '../support/ingest.ts';

// DNS outages are injected into the devstack's DNS-over-HTTPS resolver, each for one host
// name only (`match`), so the other files running at the same time are not hit.

let user: TestUser;
beforeAll(async () => {
  user = await signUp('dns');
});

const DNS_DOWN_MESSAGE = 'The web address’s host name could not be looked up; try again later';
const NO_SUCH_HOST = 'The URL redirected to an address that is not allowed: the host name does not resolve';
/** Each attempt asks for the A and the AAAA records. */
const LOOKUPS_PER_ATTEMPT = 2;

interface FaultCounts {
  seen: number;
  failed: number;
}

/** The resolver fails `count` lookups of `host` (unlimited when unset; 0 only counts them). */
async function dnsOutage(host: string, count?: number) {
  const response = await fetch(stack.faultsUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ service: 'dns', match: `name=${host}`, status: 503, ...(count === undefined ? {} : { count }) }),
  });
  expect(response.ok).toBe(true);
  return {
    async counts(): Promise<FaultCounts> {
      const { faults } = (await (await fetch(stack.faultsUrl)).json()) as { faults: (FaultCounts & { match?: string })[] };
      return faults.find((f) => f.match === `name=${host}`) as FaultCounts;
    },
    end: () => fetch(`${stack.faultsUrl}?service=dns&match=${encodeURIComponent(`name=${host}`)}`, { method: 'DELETE' }),
  };
}

/**
 * A name that does not exist, reached through a redirect from the trusted test pages: the API
 * accepts the URL without a lookup, and the ingest worker looks the name up when it follows
 * the redirect.
 */
async function ingestRedirectToNowhere() {
  const host = `dns-${randomUUID().slice(0, 8)}.example.test`;
  const url = `${stack.pagesUrl}/redirect?to=${encodeURIComponent(`http://${host}/`)}`;
  return { host, submit: () => api('POST', '/ingest/url', { token: user.token, body: { url } }) };
}

describe('DNS failures during a URL job’s fetch (the real workers and QStash)', () => {
  it('retries a DNS outage; the retry after it ends gets the real answer', async () => {
    const { host, submit } = await ingestRedirectToNowhere();
    // The first attempt's lookups fail; QStash's retry finds DNS back.
    const outage = await dnsOutage(host, LOOKUPS_PER_ATTEMPT);
    const created = await submit();
    expect(created.status).toBe(200);
    const job = await waitForJob(user.token, created.body.job_id);
    expect(job.status).toBe('failed');
    // Not "could not be looked up": the outage was retried, and the name really does not exist.
    expect(job.error_message).toBe(NO_SUCH_HOST);
    expect(await outage.counts()).toEqual(expect.objectContaining({ failed: 2, seen: 2 * LOOKUPS_PER_ATTEMPT }));
    await outage.end();
  });

  it('fails at once, with a plain message, when the name does not exist', async () => {
    const { host, submit } = await ingestRedirectToNowhere();
    const counter = await dnsOutage(host, 0);
    const job = await waitForJob(user.token, (await submit()).body.job_id);
    expect(job).toMatchObject({ status: 'failed', error_message: NO_SUCH_HOST });
    // One attempt: a definite answer is not retried.
    expect((await counter.counts()).seen).toBe(LOOKUPS_PER_ATTEMPT);
    await counter.end();
  });

  it('fails after QStash’s last retry when DNS stays down, saying so without the transport detail', async () => {
    const { host, submit } = await ingestRedirectToNowhere();
    const outage = await dnsOutage(host);
    const job = await waitForJob(user.token, (await submit()).body.job_id, 90_000);
    expect(job).toMatchObject({ status: 'failed', error_message: DNS_DOWN_MESSAGE });
    expect(job.error_message).not.toMatch(/503|HTTP|injected|resolver|fetch/i);
    // The first delivery and QStash's three retries.
    expect((await outage.counts()).seen).toBe(4 * LOOKUPS_PER_ATTEMPT);
    expect(await documentOfJob(job.job_id)).toBeNull();
    await outage.end();
  }, 90_000);
});

describe('a DNS outage, then recovery: the redelivered step succeeds', () => {
  // The workers cannot reach a public address from here, and workerd resolves names itself,
  // so this runs the ingest worker's step in this process: the real step code, the devstack's
  // resolver with the fault switch, and the connection sent to the test pages as DNS would
  // route the name there. The step's embed batches then go through QStash to the real worker.
  const host = 'alias.example.test';
  const sql = connect(stack.databaseUrl);
  afterAll(() => sql.end({ timeout: 5 }));

  const deps = (): PipelineDeps => {
    const { store, vectors, models, queue } = adaptersFor({
      OPENAI_BASE_URL: stack.openaiBaseUrl,
      OPENAI_API_KEY: stack.modelApiKey,
      SUPABASE_URL: stack.supabaseUrl,
      SUPABASE_SERVICE_ROLE_KEY: stack.serviceRoleKey,
      STORAGE_BUCKET: stack.storageBucket,
      UPSTASH_VECTOR_REST_URL: stack.vectorUrl,
      UPSTASH_VECTOR_REST_TOKEN: stack.vectorToken,
      QSTASH_URL: stack.qstashUrl,
      QSTASH_TOKEN: stack.qstashToken,
    });
    const resolve = createResolver(`${stack.supabaseUrl}/dns-query`);
    const toTestPages: typeof fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : input);
      return fetch(`${stack.pagesUrl}${url.pathname}${url.search}`, init);
    };
    return {
      db: createPipelineDb(sql),
      deliveries: createDeliveryRepo(sql),
      quota: { ...createQuotaRepo(sql), perDay: DAILY_INGEST_CHUNKS },
      store,
      vectors,
      models,
      queue,
      workerUrl: stack.ingestUrl,
      batchSize: 32,
      budget: DEFAULT_DOCUMENT_BUDGET,
      fetchUrl: (url) => guardedFetch(url, { resolve, maxBytes: MAX_DOCUMENT_BYTES, fetchImpl: toTestPages }),
      log: createLogger({ worker: 'ingest', request_id: 'ingest-dns' }),
    };
  };

  it('throws for QStash to retry while DNS is down, then ingests the page once it is back', async () => {
    const { jobId } = await queuedUrlJob(user.id, `http://${host}/article.html`);
    const outage = await dnsOutage(host);
    const step = { job_id: jobId, step: 'extract' } as const;

    const failure = await runStep(deps(), step, { retried: 0, final: false }).catch((error: unknown) => error);
    // Retried, naming how the job ends should QStash give up (its failure callback reads that back).
    expect(failure).toBeInstanceOf(RetryLater);
    expect(failure).toMatchObject({ finalMessage: 'The web address’s host name could not be looked up; try again later' });
    expect((failure as RetryLater).cause).toBeInstanceOf(FetchFailed);
    expect((failure as RetryLater).cause).toMatchObject({ reason: 'dns_failed', transient: true });
    const during = await api('GET', `/ingest/jobs/${jobId}`, { token: user.token });
    expect(during.body).toMatchObject({ status: 'processing', error_message: null });

    await outage.end();
    await runStep(deps(), step, { retried: 1, final: false });
    const job = await waitForJob(user.token, jobId);
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const text = (await chunkRows((await documentOfJob(jobId)) as string)).map((c) => c.text).join('\n');
    expect(text).toContain('La Rance station');
  });
});

describe('free text in POST /ingest/url', () => {
  it.each([
    ['a NUL in the URL', { url: 'https://example.com/\u0000page' }, 'invalid_format'],
    ['a white-space-only URL', { url: '   ' }, 'too_small'],
  ])('422 for %s, naming the field', async (_case, body, type) => {
    const response = await api('POST', '/ingest/url', { token: user.token, body });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([{ loc: ['body', 'url'], msg: expect.any(String), type }]);
  });

  it('422 for a NUL in collection_id', async () => {
    const response = await api('POST', '/ingest/url', {
      token: user.token,
      body: { url: `${stack.pagesUrl}/article.html`, collection_id: 'abc\u0000' },
    });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([{ loc: ['body', 'collection_id'], msg: expect.any(String), type: 'invalid_format' }]);
  });
});
