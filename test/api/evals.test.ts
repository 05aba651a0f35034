import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EvaluationRow } from '#core/db/evaluations.ts';
import { api, db } from '../support/client.ts';
import { type Cast, castUsers, type SharedCollection, sharedCollection } from '../support/fixtures.ts';

/** A stored evaluation: what the API lists (`collection_ids` from `collection_id` here), plus the two columns it keeps to itself. */
interface EvalRow extends Omit<EvaluationRow, 'collection_ids'> {
  collection_id: string | null;
  user_id: string;
}

const JUDGE = 'openai:gpt-4o-mini';
const EXTRACTIVE = 'devstack:extractive';

let cast: Cast;
let fx: SharedCollection;
let rows: EvalRow[];

/** One answered question, scored or not; the rest of the fields as the query endpoint would write them. */
function evaluation(
  collectionId: string | null,
  userId: string,
  createdAt: string,
  question: string,
  scores: [number, number] | null,
  extra: Partial<EvalRow> = {},
): EvalRow {
  return {
    id: randomUUID(),
    collection_id: collectionId,
    user_id: userId,
    question,
    answer: `From the sources: ${question.toLowerCase()} [1].`,
    faithfulness_score: scores?.[0] ?? null,
    context_relevance_score: scores?.[1] ?? null,
    // Any value other than the two scores, so a column mix-up shows.
    citation_support_score: scores ? 1 - scores[1] : null,
    total_latency_ms: 1500,
    embedding_latency_ms: 40,
    retrieval_latency_ms: 120,
    rerank_latency_ms: 640,
    generation_latency_ms: 1300,
    time_to_first_token_ms: 380,
    engine: JUDGE,
    retrieval_strategy: 'similarity',
    top_k: 5,
    scorer: scores ? 'judge' : null,
    scorer_error: null,
    feedback: null,
    feedback_comment: null,
    ...extra,
    created_at: createdAt,
  };
}

async function insert(evaluations: EvalRow[]) {
  const sql = db();
  await sql`insert into evaluations ${sql(evaluations as unknown as Record<string, unknown>[])}`;
}

/** What the API should list: newest first, ties by id descending (uuids compare as their hex text). */
const newestFirst = (list: EvalRow[]) =>
  [...list].sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));

// A record of one collection lists that one as every collection its question searched.
const asRecord = ({ collection_id, user_id: _u, ...record }: EvalRow) => ({ ...record, collection_ids: [collection_id] });

const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : null);
const isScored = (row: EvalRow) => row.faithfulness_score !== null && row.context_relevance_score !== null;
const citing = (rows: EvalRow[]) =>
  rows.flatMap((row) => (row.citation_support_score === null ? [] : [row.citation_support_score as number]));

/** The stats, computed here the slow way, to check the SQL against. */
function expectedStats(window: EvalRow[]) {
  const scored = window.filter(isScored);
  const days = [...new Set(window.map((row) => row.created_at.slice(0, 10)))].sort();
  const worst = [...scored]
    .sort((a, b) => {
      const [fa, ca, fb, cb] = [
        a.faithfulness_score,
        a.context_relevance_score,
        b.faithfulness_score,
        b.context_relevance_score,
      ].map(Number) as [number, number, number, number];
      const downFirst = Number(a.feedback !== 'down') - Number(b.feedback !== 'down');
      return (
        downFirst ||
        Math.min(fa, ca) - Math.min(fb, cb) ||
        fa + ca - (fb + cb) ||
        b.created_at.localeCompare(a.created_at) ||
        b.id.localeCompare(a.id)
      );
    })
    .slice(0, 5);
  return {
    total_queries: window.length,
    scored_queries: scored.length,
    avg_faithfulness: mean(scored.map((row) => row.faithfulness_score as number)),
    avg_context_relevance: mean(scored.map((row) => row.context_relevance_score as number)),
    avg_citation_support: mean(citing(scored)),
    avg_total_latency_ms: mean(window.map((row) => row.total_latency_ms)),
    avg_retrieval_latency_ms: mean(window.map((row) => row.retrieval_latency_ms)),
    avg_generation_latency_ms: mean(
      window.flatMap((row) => (row.generation_latency_ms === null ? [] : [row.generation_latency_ms])),
    ),
    trend: days.map((date) => {
      const ofDay = window.filter((row) => row.created_at.startsWith(date));
      const scoredOfDay = ofDay.filter(isScored);
      return {
        date,
        avg_faithfulness: mean(scoredOfDay.map((row) => row.faithfulness_score as number)),
        avg_context_relevance: mean(scoredOfDay.map((row) => row.context_relevance_score as number)),
        avg_citation_support: mean(citing(scoredOfDay)),
        count: ofDay.length,
      };
    }),
    worst_queries: worst.map((row) => ({
      id: row.id,
      question: row.question,
      faithfulness_score: row.faithfulness_score,
      context_relevance_score: row.context_relevance_score,
      total_latency_ms: row.total_latency_ms,
      engine: row.engine,
      created_at: row.created_at,
      feedback: row.feedback,
      feedback_comment: row.feedback_comment,
    })),
    feedback_up: window.filter((row) => row.feedback === 'up').length,
    feedback_down: window.filter((row) => row.feedback === 'down').length,
  };
}

/** Averages come out of float8 arithmetic in another order than ours: equal to 12 places, not bit for bit. */
function expectStatsClose(actual: Record<string, any>, expected: ReturnType<typeof expectedStats>) {
  const close = (value: unknown, want: number | null) => {
    if (want === null) expect(value).toBeNull();
    else {
      expect(typeof value).toBe('number');
      expect(value as number).toBeCloseTo(want, 12);
    }
  };
  expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
  expect(actual.total_queries).toBe(expected.total_queries);
  expect(actual.scored_queries).toBe(expected.scored_queries);
  expect([actual.feedback_up, actual.feedback_down]).toEqual([expected.feedback_up, expected.feedback_down]);
  for (const key of [
    'avg_faithfulness',
    'avg_context_relevance',
    'avg_citation_support',
    'avg_total_latency_ms',
    'avg_retrieval_latency_ms',
    'avg_generation_latency_ms',
  ] as const) {
    close(actual[key], expected[key]);
  }
  expect(actual.trend.map((point: { date: string; count: number }) => [point.date, point.count])).toEqual(
    expected.trend.map((point) => [point.date, point.count]),
  );
  expected.trend.forEach((point, i) => {
    close(actual.trend[i].avg_faithfulness, point.avg_faithfulness);
    close(actual.trend[i].avg_context_relevance, point.avg_context_relevance);
    close(actual.trend[i].avg_citation_support, point.avg_citation_support);
  });
  expect(actual.worst_queries).toEqual(expected.worst_queries);
}

beforeAll(async () => {
  cast = await castUsers();
  fx = await sharedCollection(cast, 'Evaluated');
  const id = fx.collectionId;
  const { owner, memberQuery, memberIngest } = cast;
  rows = [
    evaluation(id, owner.id, '2026-11-18T08:05:11.120Z', 'What was measured at baseline?', [0.92, 0.81]),
    evaluation(id, memberQuery.id, '2026-11-18T14:30:00.000Z', 'Which dose was given?', [0.4, 0.75], {
      engine: EXTRACTIVE,
      retrieval_strategy: 'mmr',
      top_k: 8,
      total_latency_ms: 310,
      embedding_latency_ms: 0,
      retrieval_latency_ms: 45,
      generation_latency_ms: 230,
      time_to_first_token_ms: 12,
      scorer: 'lexical',
    }),
    // Last half second of the 18th, UTC; the next one is the first of the 19th.
    evaluation(id, memberIngest.id, '2026-11-18T23:59:59.500Z', 'How long was the follow-up?', [1, 0.55], {
      total_latency_ms: 2210,
    }),
    evaluation(id, owner.id, '2026-11-19T00:00:00.250Z', 'Who funded the trial?', [0.15, 0.35], { total_latency_ms: 4020 }),
    // Two at the same instant: ordered by id.
    evaluation(id, owner.id, '2026-11-19T10:12:45.000Z', 'What was the primary outcome?', null),
    evaluation(id, memberQuery.id, '2026-11-19T10:12:45.000Z', 'Were there adverse events?', null, {
      scorer: 'judge',
      scorer_error: 'The judge model failed',
    }),
    // A whole day without a scored query: its trend point has null averages.
    evaluation(id, owner.id, '2026-11-20T09:00:00.000Z', 'Summarise the discussion', null, {
      answer: 'The discussion argues that',
      generation_latency_ms: null,
      total_latency_ms: 900,
      scorer_error: 'Generation failed; nothing to score',
    }),
    evaluation(id, owner.id, '2026-11-20T09:30:00.000Z', 'What are the limitations?', null, {
      generation_latency_ms: null,
      time_to_first_token_ms: null,
      total_latency_ms: 160,
    }),
    // Equal weaker scores: the lower sum is worse.
    evaluation(id, memberIngest.id, '2026-11-21T07:45:00.000Z', 'Is vitamin D linked to mood?', [0.35, 0.9]),
    evaluation(id, owner.id, '2026-11-21T08:00:00.000Z', 'What did the control group get?', [0.6, 0.35], {
      engine: EXTRACTIVE,
    }),
    // Its asker rated it down: first among the worst, however well it scored.
    evaluation(id, owner.id, '2026-11-21T12:00:00.000Z', 'How many participants enrolled?', [0.88, 0.92], {
      feedback: 'down',
      feedback_comment: 'It counted the screened, not the enrolled',
    }),
    evaluation(id, memberQuery.id, '2026-11-21T12:00:01.000Z', 'What was the dropout rate?', [0.7, 0.66], {
      feedback: 'up',
    }),
  ];
  await insert(rows);
});

describe('GET /evals/{collection_id}', () => {
  const path = () => `/evals/${fx.collectionId}` as const;

  it('lists every participant’s records, newest first, ties by id, with the documented fields', async () => {
    const response = await api('GET', path(), { token: cast.owner.token });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(newestFirst(rows).map(asRecord));
    // The two rows of the same instant: the greater id first, right before the other.
    const [first, second] = rows
      .slice(4, 6)
      .map((row) => row.id)
      .sort()
      .reverse();
    const listed = response.body.map((record) => record.id);
    expect(listed.indexOf(first as string)).toBeGreaterThan(-1);
    expect(listed.indexOf(second as string)).toBe(listed.indexOf(first as string) + 1);
  });

  it('returns numbers, integers, strings and nulls as typed', async () => {
    const { body } = await api('GET', `${path()}/`, { token: cast.memberQuery.token });
    expect(body).toHaveLength(rows.length);
    for (const record of body) {
      for (const key of ['id', 'question', 'answer', 'engine', 'retrieval_strategy', 'created_at'] as const) {
        expect(typeof record[key]).toBe('string');
      }
      for (const key of ['total_latency_ms', 'embedding_latency_ms', 'retrieval_latency_ms', 'top_k'] as const) {
        expect(Number.isInteger(record[key])).toBe(true);
      }
      for (const key of ['generation_latency_ms', 'time_to_first_token_ms'] as const) {
        expect(record[key] === null || Number.isInteger(record[key])).toBe(true);
      }
      for (const key of ['faithfulness_score', 'context_relevance_score', 'citation_support_score'] as const) {
        const score = record[key];
        expect(score === null || (typeof score === 'number' && score >= 0 && score <= 1)).toBe(true);
      }
      expect(record.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(record).not.toHaveProperty('sources');
      expect(record).not.toHaveProperty('user_id');
      expect(record).not.toHaveProperty('session_id');
    }
    const failed = body.find((record) => record.question === 'Were there adverse events?');
    expect(failed).toMatchObject({
      faithfulness_score: null,
      context_relevance_score: null,
      scorer_error: 'The judge model failed',
    });
  });

  it('pages with limit and offset', async () => {
    const expected = newestFirst(rows).map((row) => row.id);
    const page = async (query: string) =>
      (await api('GET', `${path()}?${query}`, { token: cast.memberIngest.token })).body.map((r: { id: string }) => r.id);
    expect(await page('limit=5')).toEqual(expected.slice(0, 5));
    expect(await page('limit=5&offset=5')).toEqual(expected.slice(5, 10));
    expect(await page('limit=5&offset=10')).toEqual(expected.slice(10));
    expect(await page('offset=12')).toEqual([]);
    expect(await page('offset=1000000')).toEqual([]);
    expect(await page('limit=1&offset=3')).toEqual([expected[3]]);
  });

  it.each([
    ['limit=0', 'limit', 'too_small'],
    ['limit=201', 'limit', 'too_big'],
    ['limit=-1', 'limit', 'too_small'],
    ['limit=abc', 'limit', 'invalid_type'],
    ['limit=2.5', 'limit', 'invalid_type'],
    ['limit=', 'limit', 'too_small'],
    ['offset=-1', 'offset', 'too_small'],
    ['offset=abc', 'offset', 'invalid_type'],
    ['offset=0.5', 'offset', 'invalid_type'],
  ])('refuses %s with 422', async (query, field, type) => {
    const response = await api('GET', `${path()}?${query}`, { token: cast.owner.token });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('validation_failed');
    expect(response.body.detail).toEqual([expect.objectContaining({ loc: ['query', field], type })]);
  });
});

describe('GET /evals/{collection_id}/stats', () => {
  it('aggregates averages, scored count, the daily trend and the worst queries', async () => {
    const response = await api('GET', `/evals/${fx.collectionId}/stats`, { token: cast.owner.token });
    expect(response.status).toBe(200);
    const expected = expectedStats(rows);
    expectStatsClose(response.body, expected);

    // The fixture's intent, spelled out: the sums above could agree with a wrong query by accident.
    expect(response.body).toMatchObject({ total_queries: 12, scored_queries: 8 });
    expect(response.body.trend.map((p: { date: string; count: number }) => `${p.date}:${p.count}`)).toEqual([
      '2026-11-18:3',
      '2026-11-19:3',
      '2026-11-20:2',
      '2026-11-21:4',
    ]);
    expect(response.body.trend[2]).toEqual({
      date: '2026-11-20',
      avg_faithfulness: null,
      avg_context_relevance: null,
      avg_citation_support: null,
      count: 2,
    });
    expect(response.body.trend[1]?.avg_faithfulness).toBeCloseTo(0.15, 12);
    expect(response.body.worst_queries.map((q: { question: string }) => q.question)).toEqual([
      'How many participants enrolled?',
      'Who funded the trial?',
      'What did the control group get?',
      'Is vitamin D linked to mood?',
      'Which dose was given?',
    ]);
    expect(response.body).toMatchObject({ feedback_up: 1, feedback_down: 1 });
    expect(response.body.avg_generation_latency_ms).toBeCloseTo((1300 * 9 + 230) / 10, 12);
  });

  it('gives every participant the same figures', async () => {
    const path = `/evals/${fx.collectionId}/stats/` as const;
    const owner = await api('GET', path, { token: cast.owner.token });
    for (const user of [cast.memberQuery, cast.memberIngest]) {
      expect(await api('GET', path, { token: user.token })).toMatchObject({ status: 200, body: owner.body });
    }
  });

  it('reads only the 500 most recent rows; the list pages through all of them', async () => {
    const { body: collection } = await api('POST', '/collections/', { token: cast.owner.token, body: { name: 'Busy' } });
    // The ten oldest rows are extreme in every figure, so letting any of them in would show.
    await db()`
      insert into evaluations (collection_id, user_id, question, answer, faithfulness_score, context_relevance_score,
                               citation_support_score, total_latency_ms, embedding_latency_ms, retrieval_latency_ms,
                               generation_latency_ms, time_to_first_token_ms, engine, retrieval_strategy, top_k, scorer,
                               created_at)
      select ${collection.id}, ${cast.memberIngest.id}, 'Question ' || i, 'Answer ' || i,
             case when i <= 10 then 0 else 0.9 end, case when i <= 10 then 0 else i / 1000.0 end,
             case when i <= 10 then 0 else 1 - i / 1000.0 end,
             i, 25, case when i <= 10 then 10000 else 20 end, 2 * i, 100, ${EXTRACTIVE}, 'similarity', 5, 'lexical',
             timestamptz '2026-10-01T00:00:00Z' + i * interval '1 hour'
        from generate_series(1, 510) as i`;

    const window: EvalRow[] = [];
    for (let i = 11; i <= 510; i++) {
      window.push({
        ...evaluation(
          collection.id,
          cast.memberIngest.id,
          new Date(Date.UTC(2026, 9, 1) + i * 3_600_000).toISOString(),
          `Question ${i}`,
          [0.9, i / 1000],
        ),
        total_latency_ms: i,
        retrieval_latency_ms: 20,
        generation_latency_ms: 2 * i,
      });
    }
    const stats = await api('GET', `/evals/${collection.id}/stats`, { token: cast.owner.token });
    expect(stats.status).toBe(200);
    const expected = expectedStats(window);
    // The ids were made by the database: compare everything else.
    const { worst_queries: worst, ...rest } = stats.body;
    expectStatsClose({ ...rest, worst_queries: [] }, { ...expected, worst_queries: [] });
    expect(stats.body).toMatchObject({ total_queries: 500, scored_queries: 500, avg_retrieval_latency_ms: 20 });
    expect(stats.body.avg_total_latency_ms).toBeCloseTo(260.5, 12);
    expect(stats.body.avg_faithfulness).toBeCloseTo(0.9, 12);
    expect(stats.body.avg_context_relevance).toBeCloseTo(0.2605, 12);
    expect(stats.body.trend.reduce((sum: number, point: { count: number }) => sum + point.count, 0)).toBe(500);
    expect(stats.body.trend[0]).toMatchObject({ date: '2026-10-01', count: 13 });
    expect(worst).toEqual(
      expected.worst_queries.map(({ id: _id, ...query }) => ({ id: expect.any(String), ...query, engine: EXTRACTIVE })),
    );
    expect(worst.map((q: { question: string }) => q.question)).toEqual([
      'Question 11',
      'Question 12',
      'Question 13',
      'Question 14',
      'Question 15',
    ]);

    const list = async (query: string) => (await api('GET', `/evals/${collection.id}${query}`, { token: cast.owner.token })).body;
    const firstPage = await list('');
    expect(firstPage).toHaveLength(50);
    expect(firstPage[0]?.question).toBe('Question 510');
    expect(firstPage[49]?.question).toBe('Question 461');
    expect(await list('?limit=200')).toHaveLength(200);
    expect((await list('?limit=200&offset=500')).map((r: { question: string }) => r.question)).toEqual(
      Array.from({ length: 10 }, (_, k) => `Question ${10 - k}`),
    );
    expect(await list('?limit=200&offset=510')).toEqual([]);
  });

  it('answers an empty collection with zero counts, null averages and empty arrays', async () => {
    const { body: collection } = await api('POST', '/collections/', { token: cast.owner.token, body: { name: 'Quiet' } });
    const stats = await api('GET', `/evals/${collection.id}/stats`, { token: cast.owner.token });
    expect(stats).toMatchObject({
      status: 200,
      body: {
        total_queries: 0,
        scored_queries: 0,
        avg_faithfulness: null,
        avg_context_relevance: null,
        avg_citation_support: null,
        avg_total_latency_ms: null,
        avg_retrieval_latency_ms: null,
        avg_generation_latency_ms: null,
        trend: [],
        worst_queries: [],
        feedback_up: 0,
        feedback_down: 0,
      },
    });
    expect(Object.keys(stats.body)).toHaveLength(12);
    expect((await api('GET', `/evals/${collection.id}`, { token: cast.owner.token })).body).toEqual([]);
  });

  it('gives null score averages but real latencies when nothing is scored yet', async () => {
    const { body: collection } = await api('POST', '/collections/', { token: cast.owner.token, body: { name: 'Pending' } });
    const pending = [
      evaluation(collection.id, cast.owner.id, '2026-11-22T10:00:00.000Z', 'Just asked', null, { total_latency_ms: 1000 }),
      evaluation(collection.id, cast.owner.id, '2026-11-22T10:05:00.000Z', 'Also just asked', null, {
        total_latency_ms: 2000,
        scorer_error: 'No sources to score against',
      }),
    ];
    await insert(pending);
    const { body } = await api('GET', `/evals/${collection.id}/stats`, { token: cast.owner.token });
    expectStatsClose(body, expectedStats(pending));
    expect(body).toMatchObject({ total_queries: 2, scored_queries: 0, avg_faithfulness: null, avg_total_latency_ms: 1500 });
    expect(body.trend).toEqual([
      { date: '2026-11-22', avg_faithfulness: null, avg_context_relevance: null, avg_citation_support: null, count: 2 },
    ]);
    expect(body.worst_queries).toEqual([]);
  });
});

describe('access', () => {
  it('lets the owner and both kinds of member in; strangers and admins get 403, unknown ids 404, no token 401', async () => {
    for (const suffix of ['', '/stats'] as const) {
      const path = `/evals/${fx.collectionId}${suffix}` as const;
      for (const user of [cast.owner, cast.memberQuery, cast.memberIngest]) {
        expect((await api('GET', path, { token: user.token })).status).toBe(200);
      }
      for (const user of [cast.stranger, cast.admin]) {
        expect(await api('GET', path, { token: user.token })).toMatchObject({ status: 403, body: { code: 'forbidden' } });
      }
      for (const id of [randomUUID(), 'not-a-uuid']) {
        expect(await api('GET', `/evals/${id}${suffix}`, { token: cast.owner.token })).toMatchObject({
          status: 404,
          body: { code: 'not_found' },
        });
      }
      const anonymous = await api('GET', path);
      expect(anonymous).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
      expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it('never shows another collection’s rows, nor the personal namespace’s', async () => {
    const other = await sharedCollection(cast, 'Elsewhere');
    const strangers = await api('POST', '/collections/', { token: cast.stranger.token, body: { name: 'Not yours' } });
    const intruders = [
      evaluation(other.collectionId, cast.owner.id, '2026-12-01T00:00:00.000Z', 'Other collection, newest of all', [0.01, 0.01]),
      evaluation(strangers.body.id, cast.stranger.id, '2026-12-01T00:00:01.000Z', 'A stranger’s question', [0, 0]),
      evaluation(null, cast.owner.id, '2026-12-01T00:00:02.000Z', 'Personal namespace question', [0.02, 0.02]),
    ];
    await insert(intruders);
    const intruderIds = intruders.map((row) => row.id);

    const list = await api('GET', `/evals/${fx.collectionId}?limit=200`, { token: cast.owner.token });
    expect(list.body.map((r: { id: string }) => r.id).sort()).toEqual(rows.map((row) => row.id).sort());
    const stats = await api('GET', `/evals/${fx.collectionId}/stats`, { token: cast.owner.token });
    expectStatsClose(stats.body, expectedStats(rows));
    for (const query of stats.body.worst_queries) expect(intruderIds).not.toContain(query.id);

    // The other collection sees its own row, and only it.
    const otherList = await api('GET', `/evals/${other.collectionId}`, { token: cast.memberQuery.token });
    expect(otherList.body.map((r: { id: string }) => r.id)).toEqual([intruders[0]?.id]);
    expect((await api('GET', `/evals/${strangers.body.id}`, { token: cast.owner.token })).status).toBe(403);
  });
});
