import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESCRIBE_PROMPT } from '#core/adapters/models.ts';
import { type RunningWorker, startWorker } from '../../devstack/local/worker.ts';
import { freePort } from '../../devstack/ports.ts';
import { fileForm } from '../support/api-call.ts';
import { api, db, makeAdmin, signUp, stack, type TestUser } from '../support/client.ts';
import { fixture } from '../support/documents.ts';
import { ingestFile, waitForJob } from '../support/ingest.ts';

// Usage recorded where it happens, against the real workers and the devstack's model server. The answer's
// tokens are checked against what the model server itself reported: this file's API worker reaches it
// through a proxy that reads the usage in each chat stream's last chunk. The same worker has a daily cap of
// one token, so a user's second question is refused.
const CAP = 1;
const hasEmbeddings = Boolean(stack.apiVars.EMBEDDING_MODEL);
const hasReranker = Boolean(stack.apiVars.RERANK_MODEL);

interface ReportedUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

interface UsageEvent {
  user_id: string;
  api_key_id: string | null;
  collection_id: string | null;
  request_id: string | null;
  job_id: string | null;
  evaluation_id: string | null;
  kind: string;
  purpose: string;
  model: string;
  calls: number;
  input_tokens: number;
  output_tokens: number;
  characters: number;
  documents: number;
}

/** Forwards to the devstack's model server and keeps the usage each streamed chat completion ended with. */
async function startUsageProxy(target: string) {
  const reported: ReportedUsage[] = [];
  const port = await freePort();
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const upstream = await fetch(`${target}${request.url}`, {
      method: request.method,
      headers: { 'content-type': 'application/json', authorization: request.headers.authorization ?? '' },
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    const text = await upstream.text();
    for (const line of text.split('\n')) {
      if (!line.startsWith('data: {')) continue;
      const usage = (JSON.parse(line.slice(6)) as { usage?: ReportedUsage | null }).usage;
      if (usage) reported.push(usage);
    }
    response.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
    response.end(text);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${port}`, reported, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let proxy: Awaited<ReturnType<typeof startUsageProxy>>;
let capped: RunningWorker;
let owner: TestUser;
let member: TestUser;
let stranger: TestUser;
let admin: TestUser;
let collectionId: string;
let keyId: string;
let key: string;
/** The owner's key for uploads, restricted to the collection. */
let ingestKey: { id: string; key: string };
let jobId: string;

const eventsWhere = (column: 'job_id' | 'request_id' | 'evaluation_id', value: string) =>
  db()<UsageEvent[]>`select * from usage_events where ${db()(column)} = ${value} order by kind`;

async function ask(base: string, headers: Record<string, string>, body: Record<string, unknown>) {
  const response = await fetch(`${base}/query/`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const done = /^event: done\ndata: (.*)$/m.exec(text);
  return {
    status: response.status,
    requestId: response.headers.get('X-Request-Id') as string,
    retryAfter: response.headers.get('Retry-After'),
    text,
    evaluationId: done ? (JSON.parse(done[1] as string).evaluation_id as string) : null,
  };
}

/** An upload made with the ingest key, waited for to its end. */
async function uploadWithKey(name: string, content: Uint8Array | string) {
  const created = await api('POST', `/ingest/?collection_id=${collectionId}`, {
    headers: { 'X-API-Key': ingestKey.key },
    body: fileForm(name, content),
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return waitForJob(owner.token, created.body.job_id);
}

/** What the devstack's vision model reports for describing this image, asked directly as the ingest worker asks it. */
async function visionUsageReported(image: Uint8Array, mediaType: string): Promise<ReportedUsage> {
  const response = await fetch(`${stack.openaiBaseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.modelApiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: stack.ingestVars.VISION_MODEL,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: DESCRIBE_PROMPT },
            { type: 'image_url', image_url: { url: `data:${mediaType};base64,${Buffer.from(image).toString('base64')}` } },
          ],
        },
      ],
    }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { usage: ReportedUsage }).usage;
}

async function until<T>(read: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  const openai = new URL(stack.apiVars.OPENAI_BASE_URL as string);
  proxy = await startUsageProxy(openai.origin);
  capped = await startWorker({
    config: 'wrangler.toml',
    port: await freePort(),
    vars: {
      ...stack.apiVars,
      CHAT_BASE_URL: `${proxy.url}${openai.pathname}`,
      CHAT_API_KEY: stack.apiVars.OPENAI_API_KEY ?? 'devstack',
      DAILY_TOKENS_PER_USER: String(CAP),
    },
    hyperdrive: { HYPERDRIVE: stack.databaseUrl },
    persistTo: join(stack.persistDir, 'usage'),
    quiet: true,
  });
  [owner, member, stranger, admin] = await Promise.all([
    signUp('usage-owner'),
    signUp('usage-member'),
    signUp('usage-stranger'),
    signUp('usage-admin'),
  ]);
  admin = await makeAdmin(admin);
  collectionId = (await api('POST', '/collections/', { token: owner.token, body: { name: 'Metered' } })).body.id;
  const link = await api('POST', `/collections/${collectionId}/shares`, { token: owner.token, body: { permission: 'query' } });
  expect((await api('POST', `/collections/join/${link.body.share_token}`, { token: member.token })).status).toBe(200);
  const created = await api('POST', '/keys/', { token: owner.token, body: { name: 'metered', scopes: ['query'] } });
  expect(created.status).toBe(200);
  keyId = created.body.id;
  key = created.body.key as string;
  const forIngest = await api('POST', '/keys/', {
    token: owner.token,
    body: { name: 'uploads', scopes: ['ingest'], collection_id: collectionId },
  });
  expect(forIngest.status).toBe(200);
  ingestKey = { id: forIngest.body.id, key: forIngest.body.key as string };
  const job = await ingestFile(
    owner.token,
    'keepers.txt',
    collectionId,
    'Osric Penhallow kept the Marrow Island light for thirty-one years. The lamp burned whale oil until 1880.',
  );
  expect(job.status).toBe('succeeded');
  jobId = job.job_id;
}, 180_000);

afterAll(async () => {
  await capped?.stop();
  await proxy?.stop();
});

describe('usage recorded where it happens', () => {
  it.skipIf(!hasEmbeddings)('an upload: its embedding tokens, under its user, collection and job', async () => {
    const events = await eventsWhere('job_id', jobId);
    expect(events.map((e) => [e.kind, e.purpose])).toEqual([['embedding', 'ingest']]);
    const embedded = events[0] as UsageEvent;
    // Uploaded with a bearer token: no key.
    expect(embedded).toMatchObject({
      user_id: owner.id,
      api_key_id: null,
      collection_id: collectionId,
      model: stack.apiVars.EMBEDDING_MODEL,
    });
    expect(embedded.input_tokens).toBeGreaterThan(10);
    expect(embedded.characters).toBe(0);
    // The request that queued the upload, carried through its steps.
    expect(embedded.request_id).toMatch(/^[\w-]{8,}$/);
  });

  it('an upload made with an API key: its job and its usage carry the key', async () => {
    const job = await uploadWithKey(
      'lamps.txt',
      'The Marrow Island lamp was converted from whale oil to kerosene in 1880 and to electricity in 1931.',
    );
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const [row] = await db()<{ api_key_id: string | null }[]>`select api_key_id from ingest_jobs where id = ${job.job_id}`;
    expect(row?.api_key_id).toBe(ingestKey.id);
    const [earlier] = await db()<{ api_key_id: string | null }[]>`select api_key_id from ingest_jobs where id = ${jobId}`;
    expect(earlier?.api_key_id).toBeNull();
    if (!hasEmbeddings) return;
    const events = await eventsWhere('job_id', job.job_id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: 'embedding',
      purpose: 'ingest',
      user_id: owner.id,
      api_key_id: ingestKey.id,
      collection_id: collectionId,
      job_id: job.job_id,
      model: stack.apiVars.EMBEDDING_MODEL,
    });
    expect(events[0]?.input_tokens).toBeGreaterThan(10);
  });

  it('an image: its vision call, as the model server reported it, under the job and the key it was uploaded with', async () => {
    const name = 'table-multi-row-column-cells.png';
    const job = await uploadWithKey(name, fixture(name));
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const events = await eventsWhere('job_id', job.job_id);
    expect(events.map((e) => e.kind)).toEqual(hasEmbeddings ? ['embedding', 'vision'] : ['vision']);
    const vision = events.find((e) => e.kind === 'vision') as UsageEvent;
    expect(vision).toMatchObject({
      purpose: 'ingest',
      user_id: owner.id,
      api_key_id: ingestKey.id,
      collection_id: collectionId,
      job_id: job.job_id,
      evaluation_id: null,
      model: stack.ingestVars.VISION_MODEL,
      characters: 0,
      documents: 0,
    });
    expect(vision.calls).toBeGreaterThanOrEqual(1);
    // The same request again gets the same report (OCR is deterministic): the image's tiles and the prompt in,
    // the text read out. A batch retried after the call would have paid for it again, and counted it again.
    const reported = await visionUsageReported(fixture(name), 'image/png');
    expect(reported.prompt_tokens).toBeGreaterThan(85);
    expect(reported.completion_tokens).toBeGreaterThan(10);
    expect(vision.input_tokens).toBe(vision.calls * reported.prompt_tokens);
    expect(vision.output_tokens).toBe(vision.calls * reported.completion_tokens);
  });

  it('an answer: its input and output tokens as the model server reported them, with the key, collection and request', async () => {
    const before = proxy.reported.length;
    const asked = await ask(
      capped.url,
      { 'X-API-Key': key },
      {
        question: 'Who kept the Marrow Island light?',
        collection_id: collectionId,
        ...(hasReranker ? { rerank: true } : {}),
      },
    );
    expect(asked.status, asked.text).toBe(200);
    expect(asked.evaluationId).toBeTruthy();
    expect(proxy.reported).toHaveLength(before + 1);
    const reported = proxy.reported.at(-1) as ReportedUsage;
    expect(reported.prompt_tokens).toBeGreaterThan(0);
    expect(reported.completion_tokens).toBeGreaterThan(0);

    // Written in the answer's record's own statement; polled all the same, as a client would not wait for it.
    const events = await until(async () => {
      const rows = await eventsWhere('request_id', asked.requestId);
      return rows.some((e) => e.kind === 'answer') ? rows : undefined;
    });
    const answer = events.find((e) => e.kind === 'answer');
    expect(answer).toMatchObject({
      user_id: owner.id,
      api_key_id: keyId,
      collection_id: collectionId,
      evaluation_id: asked.evaluationId,
      purpose: 'query',
      model: stack.apiVars.CHAT_MODEL,
      calls: 1,
      input_tokens: reported.prompt_tokens,
      output_tokens: reported.completion_tokens,
    });
    const kinds = events.map((e) => e.kind);
    if (hasEmbeddings) expect(kinds).toContain('embedding');
    if (hasReranker) {
      // A rerank: one call, the passages it was sent, and the tokens it read.
      const rerank = events.find((e) => e.kind === 'rerank');
      expect(rerank).toMatchObject({ calls: 1, model: stack.apiVars.RERANK_MODEL, api_key_id: keyId });
      expect(rerank?.documents).toBeGreaterThan(0);
      expect(rerank?.input_tokens).toBeGreaterThan(0);
    }
  });

  it.skipIf(!hasEmbeddings)('a scoring: its embedding calls, under the answer’s user, key, collection and request', async () => {
    const asked = await ask(
      stack.apiUrl,
      { Authorization: `Bearer ${owner.token}` },
      {
        question: 'What did the lamp burn?',
        collection_id: collectionId,
      },
    );
    expect(asked.status).toBe(200);
    const scoring = await until(async () => {
      const rows = (await eventsWhere('evaluation_id', asked.evaluationId as string)).filter((e) => e.purpose === 'scoring');
      return rows.length > 0 ? rows : undefined;
    });
    expect(scoring[0]).toMatchObject({
      kind: 'embedding',
      user_id: owner.id,
      api_key_id: null,
      collection_id: collectionId,
      request_id: asked.requestId,
    });
    expect(scoring[0]?.input_tokens).toBeGreaterThan(0);
  });

  it('a search: the question’s embedding, under the search’s request', async () => {
    const response = await api('POST', '/query/search', {
      token: member.token,
      body: { question: 'Marrow Island keeper', collection_id: collectionId },
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('X-Request-Id') as string;
    const events = await until(async () => {
      const rows = await eventsWhere('request_id', requestId);
      return rows.length > 0 || !hasEmbeddings ? rows : undefined;
    });
    if (hasEmbeddings) expect(events[0]).toMatchObject({ kind: 'embedding', purpose: 'search', user_id: member.id });
  });
});

describe('GET /usage', () => {
  type Usage = { scope: string; rows: { date: string; group: string | null; input_tokens: number; output_tokens: number }[] };
  const read = (user: TestUser, query: string) => api('GET', `/usage?${query}`, { token: user.token });
  const groups = (body: Usage) => [...new Set(body.rows.map((row) => row.group))].sort();

  it('the caller’s own, grouped by user, key, collection and model, with totals that match the records', async () => {
    const byUser = await read(owner, 'group_by=user');
    expect(byUser.status, JSON.stringify(byUser.body)).toBe(200);
    expect(byUser.body.scope).toBe('own');
    expect(groups(byUser.body as Usage)).toEqual([owner.id]);
    expect(byUser.body.priced).toBe(false);
    expect(byUser.body.totals.cost_usd).toBeNull();
    const [recorded] = await db()<{ input: number; output: number }[]>`
      select sum(input_tokens)::int as input, sum(output_tokens)::int as output from usage_events where user_id = ${owner.id}`;
    expect(byUser.body.totals.input_tokens).toBe(recorded?.input);
    expect(byUser.body.totals.output_tokens).toBe(recorded?.output);

    // The answer asked with the query key, the uploads made with the ingest key, and the rest (the bearer
    // token's answer and upload, the scoring of that answer) without one.
    expect(groups((await read(owner, 'group_by=key')).body as Usage)).toEqual([keyId, ingestKey.id, null].sort());
    expect(groups((await read(owner, 'group_by=collection')).body as Usage)).toEqual([collectionId]);
    const models = groups((await read(owner, 'group_by=model')).body as Usage);
    expect(models).toContain(stack.apiVars.CHAT_MODEL);
    if (hasEmbeddings) expect(models).toContain(stack.apiVars.EMBEDDING_MODEL);
    const today = new Date().toISOString().slice(0, 10);
    expect((byUser.body as Usage).rows.map((row) => row.date)).toEqual([today]);
    // A window without today is empty.
    const past = await read(owner, 'since=2026-01-01&until=2026-01-31');
    expect(past.body.rows).toEqual([]);
  });

  it('a collection’s for its owner (every participant’s), 403 for a member or stranger, 404 for none', async () => {
    const owned = await read(owner, `group_by=user&collection_id=${collectionId}`);
    expect(owned.status).toBe(200);
    expect(owned.body.scope).toBe('collection');
    if (hasEmbeddings) expect(groups(owned.body as Usage)).toEqual([owner.id, member.id].sort());
    expect((await read(member, `collection_id=${collectionId}`)).status).toBe(403);
    expect((await read(stranger, `collection_id=${collectionId}`)).status).toBe(403);
    expect((await read(owner, 'collection_id=00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await read(owner, 'collection_id=nope')).status).toBe(404);
    // A member's own usage is theirs to read.
    const mine = await read(member, 'group_by=user');
    expect(mine.status).toBe(200);
    if (hasEmbeddings) expect(groups(mine.body as Usage)).toEqual([member.id]);
  });

  it('everyone’s for an admin; bearer tokens only; the window checked', async () => {
    const all = await read(admin, 'group_by=user');
    expect(all.status).toBe(200);
    expect(all.body.scope).toBe('all');
    expect(groups(all.body as Usage)).toEqual(expect.arrayContaining([owner.id]));
    expect((await read(admin, `collection_id=${collectionId}`)).body.scope).toBe('collection');

    const withKey = await api('GET', '/usage', { headers: { 'X-API-Key': key } });
    expect(withKey.status).toBe(403);
    const reversed = await read(owner, 'since=2026-11-27&until=2026-11-01');
    expect(reversed.status).toBe(422);
    expect((await read(owner, 'group_by=planet')).status).toBe(422);
  });
});

describe('a daily token cap', () => {
  it('refuses a question past it with its reason, until 00:00 UTC', async () => {
    const user = await signUp('usage-capped');
    const first = await ask(capped.url, { Authorization: `Bearer ${user.token}` }, { question: 'Who kept the light?' });
    expect(first.status).toBe(200);
    // The answer's usage is written just after its `done`.
    await until(async () => ((await eventsWhere('request_id', first.requestId)).length > 0 ? true : undefined));
    const second = await ask(capped.url, { Authorization: `Bearer ${user.token}` }, { question: 'Who kept the light?' });
    expect(second.status).toBe(429);
    const refusal = JSON.parse(second.text) as { code: string; detail: string };
    expect(refusal.code).toBe('token_cap_exceeded');
    expect(refusal.detail).toMatch(
      /^Your daily model budget of 1 tokens is used up \(\d[\d,]* used today .*resets at 00:00 UTC$/,
    );
    const midnight = new Date();
    midnight.setUTCHours(24, 0, 0, 0);
    const retryAfter = Number(second.retryAfter);
    expect(Math.abs(retryAfter - (midnight.getTime() - Date.now()) / 1000)).toBeLessThan(60);

    const search = await fetch(`${capped.url}/query/search`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${user.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ question: 'light' }),
    });
    expect(search.status).toBe(429);
    // Another user is not held back by it.
    const other = await ask(capped.url, { Authorization: `Bearer ${stranger.token}` }, { question: 'Who kept the light?' });
    expect(other.status).toBe(200);
    // The suite's API has no cap.
    const uncapped = await ask(stack.apiUrl, { Authorization: `Bearer ${user.token}` }, { question: 'Who kept the light?' });
    expect(uncapped.status).toBe(200);
  });
});
