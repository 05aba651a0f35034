/** The clients of bench/query/query.ts: `POST /query/` asked and its event stream read, as a user's client reads it. */
import { readQueryStream } from '../../client/index.ts';
import type { Question } from './query-stack.ts';

/** One request as the client saw it; times are `performance.now()` of this process. */
export interface Sample {
  question: Question;
  status: number;
  start: number;
  metadata: number | null;
  firstToken: number | null;
  done: number | null;
  end: number;
  tokens: number;
  answerChars: number;
  topSource: string | null;
  embeddingMs: number | null;
  retrievalMs: number | null;
  generationMs: number | null;
  reportedTtftMs: number | null;
  error: string | null;
}

export interface Asking {
  apiUrl: string;
  token: string;
  collectionId: string;
  topK: number;
}

async function ask(asking: Asking, question: Question): Promise<Sample> {
  const sample: Sample = {
    question,
    status: 0,
    start: performance.now(),
    metadata: null,
    firstToken: null,
    done: null,
    end: Number.NaN,
    tokens: 0,
    answerChars: 0,
    topSource: null,
    embeddingMs: null,
    retrievalMs: null,
    generationMs: null,
    reportedTtftMs: null,
    error: null,
  };
  try {
    const response = await fetch(`${asking.apiUrl}/query/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${asking.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ question: question.question, collection_id: asking.collectionId, top_k: asking.topK }),
      signal: AbortSignal.timeout(120_000),
    });
    sample.status = response.status;
    if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
      sample.error = `${response.status} ${(await response.text()).slice(0, 300)}`;
      return sample;
    }
    for await (const { event, data } of readQueryStream(response.body as ReadableStream<Uint8Array>)) {
      const at = performance.now();
      if (event === 'metadata') {
        sample.metadata = at;
        sample.topSource = data.sources[0]?.source ?? null;
        sample.embeddingMs = data.embedding_latency_ms;
        sample.retrievalMs = data.retrieval_latency_ms;
      } else if (event === 'token') {
        sample.firstToken ??= at;
        sample.tokens++;
        sample.answerChars += data.token.length;
      } else if (event === 'done') {
        sample.done = at;
        sample.generationMs = data.generation_latency_ms;
        sample.reportedTtftMs = data.time_to_first_token_ms;
      } else {
        sample.error = `error event: ${JSON.stringify(data)}`;
      }
    }
    if (sample.done === null && !sample.error) sample.error = 'the stream ended without a done event';
  } catch (error) {
    sample.error = error instanceof Error ? error.message : String(error);
  } finally {
    sample.end = performance.now();
  }
  return sample;
}

/**
 * `total` requests from `concurrency` clients, each asking only its own questions (client w asks
 * questions w, w + c, w + 2c, …), so no two requests in flight share a question and the model proxy's
 * calls can be matched to requests by their question.
 */
export async function run(
  asking: Asking,
  questions: Question[],
  concurrency: number,
  total: number,
): Promise<{ samples: Sample[]; wallMs: number }> {
  const samples: Sample[] = [];
  let issued = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, client) => {
      const own = questions.filter((_, index) => index % concurrency === client);
      for (let k = 0; issued < total; k++) {
        issued++;
        samples.push(await ask(asking, own[k % own.length] as Question));
      }
    }),
  );
  return { samples, wallMs: performance.now() - started };
}
