import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@upstash/qstash';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWorker, startWorker } from '../../devstack/local/worker.ts';
import { freePort } from '../../devstack/ports.ts';
import { signDelivery } from '../../devstack/qstash/signature.ts';
import { api, db, signUp, stack } from '../support/client.ts';

// A real PubMedQA item: its abstract sections are the retrieved sources.
const pubmed = JSON.parse(readFileSync(new URL('../fixtures/pubmedqa/pqal_dev-first60.json', import.meta.url), 'utf8')) as Record<
  string,
  { QUESTION: string; CONTEXTS: string[] }
>;
const trial = pubmed['10808977'] as { QUESTION: string; CONTEXTS: string[] };
const sources = trial.CONTEXTS.map((text, i) => ({
  source: 'mammography-trial.txt',
  chunk_index: i,
  text,
  score: 0.5,
  chunk_type: 'text',
  image_url: null,
}));
const FAITHFUL =
  'Compared to usual care alone, telephone counseling promoted a significantly higher proportion of women having ' +
  'mammograms on schedule (71% vs 61%) than did tailored print (67% vs 61%), but only after the first year of ' +
  'intervention [6]. The trial randomized one thousand ninety-nine women aged 50 and older from a health maintenance ' +
  'organization in North Carolina [3][4].';
const HALLUCINATED =
  'Tailored print brochures tripled mammography use to 95% within six months [1]. The study followed 5,000 men in ' +
  'California who received free ultrasound vouchers [2]. Researchers concluded that screening should stop after age 40 [3].';
const BAD_JUDGE = 'no-such-judge-model';

interface EvaluationRow {
  faithfulness_score: number | null;
  context_relevance_score: number | null;
  scorer: string | null;
  scorer_error: string | null;
  scored_at: Date | null;
}

let lexical: RunningWorker;
let judge: RunningWorker;
let userId: string;
let collectionId: string;
const qstash = new Client({ baseUrl: stack.qstashUrl, token: stack.qstashToken });
const expectedScorer = stack.apiVars.EMBEDDING_MODEL ? 'lexical+embeddings' : 'lexical';

async function startScoringWorker(name: string, extra: Record<string, string> = {}): Promise<RunningWorker> {
  const port = await freePort();
  return startWorker({
    config: 'workers/scoring/wrangler.toml',
    port,
    vars: {
      ...stack.apiVars,
      SCORING_WORKER_URL: `http://127.0.0.1:${port}`,
      QSTASH_CURRENT_SIGNING_KEY: stack.qstashSigningKeys.current,
      QSTASH_NEXT_SIGNING_KEY: stack.qstashSigningKeys.next,
      ...extra,
    },
    hyperdrive: { HYPERDRIVE: stack.databaseUrl },
    persistTo: join(stack.persistDir, 'wrangler', `scoring-${name}`),
    quiet: true,
  });
}

beforeAll(async () => {
  [lexical, judge] = await Promise.all([startScoringWorker('lexical'), startScoringWorker('judge', { JUDGE_MODEL: BAD_JUDGE })]);
  const user = await signUp('scoring');
  userId = user.id;
  const created = await api('POST', '/collections/', { token: user.token, body: { name: 'Scored answers' } });
  expect(created.status).toBe(200);
  collectionId = created.body.id;
});

afterAll(async () => {
  await Promise.all([lexical?.stop(), judge?.stop()]);
});

/** An evaluation row as the query endpoint leaves it: answered, not yet scored. */
async function insertEvaluation(answer: string, rowSources: unknown = sources): Promise<string> {
  const [row] = await db()<{ id: string }[]>`
    insert into evaluations (collection_id, user_id, question, answer, sources, total_latency_ms, retrieval_latency_ms,
                             engine, retrieval_strategy, top_k)
    values (${collectionId}, ${userId}, ${trial.QUESTION}, ${answer}, ${db().json(rowSources as never)}, 120, 30,
            'test', 'similarity', ${sources.length})
    returning id`;
  return (row as { id: string }).id;
}

async function evaluation(id: string): Promise<EvaluationRow | undefined> {
  const [row] = await db()<EvaluationRow[]>`
    select faithfulness_score, context_relevance_score, scorer, scorer_error, scored_at from evaluations where id = ${id}`;
  return row;
}

async function waitScored(id: string, timeoutMs = 25_000): Promise<EvaluationRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await evaluation(id);
    if (row?.scored_at) return row;
    if (Date.now() > deadline) throw new Error(`evaluation ${id} was not scored within ${timeoutMs} ms: ${JSON.stringify(row)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function publish(worker: RunningWorker, id: string, retries = 3) {
  return qstash.publishJSON({
    url: `${worker.url}/score`,
    body: { evaluation_id: id },
    failureCallback: `${worker.url}/failures`,
    retries,
  });
}

/** A delivery signed the way QStash signs it, with any part of it wrong on purpose. */
async function deliver(
  worker: RunningWorker,
  path: string,
  body: string,
  options: { key?: string; signedUrl?: string; signedBody?: string; now?: number; retried?: number; unsigned?: boolean } = {},
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (!options.unsigned) {
    headers['Upstash-Signature'] = await signDelivery(
      options.key ?? stack.qstashSigningKeys.current,
      options.signedUrl ?? `${worker.url}${path}`,
      new TextEncoder().encode(options.signedBody ?? body),
      options.now,
    );
  }
  if (options.retried !== undefined) headers['Upstash-Retried'] = String(options.retried);
  const response = await fetch(`${worker.url}${path}`, { method: 'POST', headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, body: parsed };
}

const scoreBody = (id: string) => JSON.stringify({ evaluation_id: id });
const failureBody = (id: string, retried?: number) =>
  JSON.stringify({ status: 500, sourceBody: Buffer.from(scoreBody(id)).toString('base64'), retried });

describe('scoring through QStash', () => {
  it('scores a faithful answer high and a hallucinated one low, both in [0, 1]', async () => {
    const faithfulId = await insertEvaluation(FAITHFUL);
    const hallucinatedId = await insertEvaluation(HALLUCINATED);
    await Promise.all([publish(lexical, faithfulId), publish(lexical, hallucinatedId)]);
    const [faithful, hallucinated] = await Promise.all([waitScored(faithfulId), waitScored(hallucinatedId)]);

    for (const row of [faithful, hallucinated]) {
      expect(row).toMatchObject({ scorer: expectedScorer, scorer_error: null });
      for (const score of [row.faithfulness_score, row.context_relevance_score]) {
        expect(score).toBeGreaterThanOrEqual(0);
        expect(score).toBeLessThanOrEqual(1);
      }
    }
    expect(faithful.faithfulness_score).toBeGreaterThanOrEqual(0.9);
    expect(hallucinated.faithfulness_score).toBeLessThanOrEqual(0.2);
    // The same sources for the same question: relevance does not depend on the answer.
    expect(faithful.context_relevance_score).toBeGreaterThan(0.2);
    expect(hallucinated.context_relevance_score).toBe(faithful.context_relevance_score);
  });

  it('rates unrelated sources as less relevant than on-point ones', async () => {
    const unrelated = [{ source: 'other.txt', chunk_index: 0, text: 'General practitioners greeted patients by first name.' }];
    const onPointId = await insertEvaluation(FAITHFUL);
    const offTopicId = await insertEvaluation(FAITHFUL, unrelated);
    await Promise.all([publish(lexical, onPointId), publish(lexical, offTopicId)]);
    const [onPoint, offTopic] = await Promise.all([waitScored(onPointId), waitScored(offTopicId)]);
    expect(offTopic.context_relevance_score).toBeLessThan(onPoint.context_relevance_score as number);
    expect(offTopic.faithfulness_score).toBe(0);
  });

  it('leaves a scored record unchanged on a duplicate delivery, and scores concurrent deliveries once', async () => {
    const id = await insertEvaluation(FAITHFUL);
    await publish(lexical, id);
    const first = await waitScored(id);

    const again = await deliver(lexical, '/score', scoreBody(id), { retried: 1 });
    expect(again).toMatchObject({ status: 200, body: { outcome: 'skipped' } });
    await publish(lexical, id);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await evaluation(id)).toEqual(first);

    const raceId = await insertEvaluation(HALLUCINATED);
    const outcomes = await Promise.all([1, 2, 3].map(() => deliver(lexical, '/score', scoreBody(raceId))));
    expect(outcomes.map((o) => o.status)).toEqual([200, 200, 200]);
    expect(outcomes.filter((o) => o.body.outcome === 'scored')).toHaveLength(1);
    expect(outcomes.filter((o) => o.body.outcome === 'skipped')).toHaveLength(2);
  });

  it('answers 200 and changes nothing for a record that does not exist', async () => {
    const missing = crypto.randomUUID();
    expect(await deliver(lexical, '/score', scoreBody(missing))).toMatchObject({ status: 200, body: { outcome: 'skipped' } });
    expect(await deliver(lexical, '/failures', failureBody(missing, 3))).toMatchObject({
      status: 200,
      body: { outcome: 'skipped' },
    });
    expect(await evaluation(missing)).toBeUndefined();
  });
});

describe('signatures', () => {
  it('refuses unsigned, forged, expired, re-targeted and altered deliveries with 401, changing nothing', async () => {
    const id = await insertEvaluation(FAITHFUL);
    const body = scoreBody(id);
    const otherId = await insertEvaluation(FAITHFUL);
    const refused = await Promise.all([
      deliver(lexical, '/score', body, { unsigned: true }),
      deliver(lexical, '/score', body, { key: 'not-the-signing-key' }),
      deliver(lexical, '/score', body, { now: Date.now() - 10 * 60_000 }),
      deliver(lexical, '/score', body, { signedUrl: `${lexical.url}/failures` }),
      deliver(lexical, '/score', body, { signedUrl: `${judge.url}/score` }),
      // A genuine signature for another message, with this body swapped in.
      deliver(lexical, '/score', body, { signedBody: scoreBody(otherId) }),
      deliver(lexical, '/failures', failureBody(id, 3), { unsigned: true }),
    ]);
    for (const response of refused) expect(response).toMatchObject({ status: 401, body: { detail: expect.any(String) } });
    const untouched = {
      faithfulness_score: null,
      context_relevance_score: null,
      scorer: null,
      scorer_error: null,
      scored_at: null,
    };
    expect(await evaluation(id)).toEqual(untouched);
    expect(await evaluation(otherId)).toEqual(untouched);

    // The next signing key is accepted too (key rotation).
    expect(await deliver(lexical, '/score', body, { key: stack.qstashSigningKeys.next })).toMatchObject({
      status: 200,
      body: { outcome: 'scored' },
    });
  });

  it('answers 400 to a signed body that is not a scoring message', async () => {
    for (const body of ['{"evaluation_id":"not-a-uuid"}', '{}', 'not json']) {
      expect((await deliver(lexical, '/score', body)).status).toBe(400);
    }
    expect((await deliver(lexical, '/failures', JSON.stringify({ sourceBody: '!!!' }))).status).toBe(400);
  });

  it('serves health without a signature', async () => {
    const response = await fetch(`${lexical.url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });
});

describe('scorer failures', () => {
  it('records a plain scorer_error when the judge keeps failing, after QStash retries', async () => {
    const id = await insertEvaluation(FAITHFUL);
    await publish(judge, id);
    const row = await waitScored(id);
    expect(row).toMatchObject({
      faithfulness_score: null,
      context_relevance_score: null,
      scorer: `judge:${BAD_JUDGE}`,
      scorer_error: 'Scoring failed after 4 attempts',
    });
  });

  it('retries (500) and leaves the record unscored, whatever count the unsigned Upstash-Retried claims', async () => {
    const id = await insertEvaluation(FAITHFUL);
    // 3 is QStash's last retry here: only the signed failure callback may end the record.
    for (const retried of [1, 3, 99]) {
      const response = await deliver(judge, '/score', scoreBody(id), { retried });
      expect(response.status).toBe(500);
      expect(JSON.stringify(response.body)).not.toContain(BAD_JUDGE);
      expect(await evaluation(id)).toMatchObject({ scored_at: null, scorer_error: null });
    }
  });

  it('records the failure from the failure callback when the last attempt could not', async () => {
    const id = await insertEvaluation(FAITHFUL);
    // No retries: the one failed attempt is not the last by the worker's count, so only the callback records it.
    await publish(judge, id, 0);
    expect(await waitScored(id)).toMatchObject({
      faithfulness_score: null,
      scorer: `judge:${BAD_JUDGE}`,
      scorer_error: 'Scoring failed after 1 attempt',
    });
  });

  it('ignores a failure callback for a record already scored', async () => {
    const id = await insertEvaluation(FAITHFUL);
    await publish(lexical, id);
    const scored = await waitScored(id);
    expect(await deliver(lexical, '/failures', failureBody(id, 3))).toMatchObject({ status: 200, body: { outcome: 'skipped' } });
    expect(await evaluation(id)).toEqual(scored);
  });

  it('marks a record whose stored sources are malformed, without retrying', async () => {
    const id = await insertEvaluation(FAITHFUL, [{ source: 'x.txt', text: 42 }]);
    expect(await deliver(lexical, '/score', scoreBody(id))).toMatchObject({ status: 200, body: { outcome: 'failed' } });
    expect(await evaluation(id)).toMatchObject({ faithfulness_score: null, scorer_error: expect.stringMatching(/malformed/) });
  });
});
