import { join } from 'node:path';
import { type ServerType, serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWorker, startWorker } from '../../devstack/local/worker.ts';
import { freePort } from '../../devstack/ports.ts';
import { api, db, signUp, stack, type TestUser } from '../support/client.ts';
import { ingestFile } from '../support/ingest.ts';

// The judge's usage, end to end: a question asked with an API key through an API worker whose scoring worker
// judges with JUDGE_MODEL. The devstack's chat model cannot act as a judge (it quotes passages, never JSON), so
// the judge is a small OpenAI-compatible server of this file's own that answers with a valid judgment and
// reports its usage as OpenAI does; the recorded rows are checked against what it reported.
const JUDGE = 'usage-judge';

interface Reported {
  schema: string;
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

const words = (text: string) => text.match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)?.length ?? 0;

/**
 * Judges every claim supported and every citation upheld, as the JSON schema the request names asks; the
 * usage it reports is the words and marks of the prompt and of its answer.
 */
async function startJudge() {
  const reported: Reported[] = [];
  const app = new Hono();
  app.post('/v1/chat/completions', async (c) => {
    const body = (await c.req.json()) as {
      model: string;
      messages: { role: string; content: string }[];
      response_format?: { json_schema?: { name?: string } };
    };
    const prompt = body.messages.map((m) => m.content).join('\n');
    const schema = body.response_format?.json_schema?.name ?? 'none';
    const pairs = [...prompt.matchAll(/<pair n="(\d+)">/g)].map((m) => Number(m[1]));
    const output =
      schema === 'citation_verdicts'
        ? { verdicts: pairs.map((pair) => ({ pair, supported: true })) }
        : {
            statements: [{ statement: 'Osric Penhallow kept the Marrow Island light.', supported: true }],
            context_relevance: 0.9,
          };
    const content = JSON.stringify(output);
    const usage = { prompt_tokens: words(prompt), completion_tokens: words(content) };
    reported.push({ schema, ...usage });
    return c.json({
      id: `chatcmpl-${reported.length}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    });
  });
  app.all('*', (c) => c.json({ error: { message: 'not served here' } }, 404));
  const port = await freePort();
  const server: ServerType = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' });
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    reported,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let judgeServer: Awaited<ReturnType<typeof startJudge>>;
let scoring: RunningWorker;
let asking: RunningWorker;
let owner: TestUser;
let collectionId: string;
let keyId: string;
let key: string;

beforeAll(async () => {
  judgeServer = await startJudge();
  const scoringPort = await freePort();
  const starting = Promise.all([
    startWorker({
      config: 'workers/scoring/wrangler.toml',
      port: scoringPort,
      vars: {
        ...stack.apiVars,
        SCORING_WORKER_URL: `http://127.0.0.1:${scoringPort}`,
        QSTASH_CURRENT_SIGNING_KEY: stack.qstashSigningKeys.current,
        QSTASH_NEXT_SIGNING_KEY: stack.qstashSigningKeys.next,
        JUDGE_MODEL: JUDGE,
        JUDGE_BASE_URL: judgeServer.baseUrl,
        JUDGE_API_KEY: 'judge-key',
      },
      hyperdrive: { HYPERDRIVE: stack.databaseUrl },
      persistTo: join(stack.persistDir, 'wrangler', 'scoring-usage-judge'),
      quiet: true,
    }),
    // The suite's API, but with its answers scored by the judge above.
    startWorker({
      config: 'wrangler.toml',
      port: await freePort(),
      vars: { ...stack.apiVars, SCORING_WORKER_URL: `http://127.0.0.1:${scoringPort}` },
      hyperdrive: { HYPERDRIVE: stack.databaseUrl },
      persistTo: join(stack.persistDir, 'usage-judge'),
      quiet: true,
    }),
  ]);
  owner = await signUp('usage-judged');
  collectionId = (await api('POST', '/collections/', { token: owner.token, body: { name: 'Judged' } })).body.id;
  const created = await api('POST', '/keys/', { token: owner.token, body: { name: 'judged', scopes: ['query'] } });
  expect(created.status).toBe(200);
  keyId = created.body.id;
  key = created.body.key as string;
  const job = await ingestFile(
    owner.token,
    'keepers.txt',
    collectionId,
    'Osric Penhallow kept the Marrow Island light for thirty-one years. The lamp burned whale oil until 1880.',
  );
  expect(job.status).toBe('succeeded');
  [scoring, asking] = await starting;
}, 180_000);

afterAll(async () => {
  await Promise.all([scoring?.stop(), asking?.stop()]);
  await judgeServer?.stop();
});

describe('the judge’s usage', () => {
  it('a judged answer: its judge calls as the judge reported them, under the answer’s evaluation, user, key, collection and request', async () => {
    const response = await fetch(`${asking.url}/query/`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ question: 'Who kept the Marrow Island light?', collection_id: collectionId }),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    const requestId = response.headers.get('X-Request-Id') as string;
    const done = /^event: done\ndata: (.*)$/m.exec(text);
    const evaluationId = JSON.parse(done?.[1] as string).evaluation_id as string;
    expect(evaluationId).toBeTruthy();

    const deadline = Date.now() + 30_000;
    let judged: UsageEvent[] = [];
    while (judged.length === 0) {
      if (Date.now() > deadline) throw new Error(`no judge usage for evaluation ${evaluationId}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      judged = await db()<UsageEvent[]>`
        select * from usage_events where evaluation_id = ${evaluationId} and purpose = 'scoring'`;
    }
    const [scored] = await db()<{ scorer: string; faithfulness_score: number }[]>`
      select scorer, faithfulness_score from evaluations where id = ${evaluationId}`;
    expect(scored).toMatchObject({ scorer: `judge:${JUDGE}`, faithfulness_score: 1 });

    // The faithfulness judgment, and the citations' verdicts when the answer cites: every call the judge
    // answered, summed into one row.
    expect(judgeServer.reported.map((r) => r.schema)).toContain('judgment');
    expect(judged).toHaveLength(1);
    expect(judged[0]).toMatchObject({
      kind: 'judge',
      purpose: 'scoring',
      model: JUDGE,
      user_id: owner.id,
      api_key_id: keyId,
      collection_id: collectionId,
      evaluation_id: evaluationId,
      request_id: requestId,
      job_id: null,
      calls: judgeServer.reported.length,
      input_tokens: judgeServer.reported.reduce((sum, r) => sum + r.prompt_tokens, 0),
      output_tokens: judgeServer.reported.reduce((sum, r) => sum + r.completion_tokens, 0),
    });
    expect(judged[0]?.input_tokens).toBeGreaterThan(50);
    expect(judged[0]?.output_tokens).toBeGreaterThan(5);
  });
});
