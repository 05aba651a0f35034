/**
 * What bench/query/query.ts runs against: PubMedQA abstracts and their questions, and the stack of
 * bench/harness/stack.ts with the API worker's model endpoint and database behind timing proxies.
 */
import { readFileSync } from 'node:fs';
import { createTestDatabase } from '../../devstack/harness/real-postgres.ts';
import { type BenchStack, startBenchStack } from './stack.ts';
import { type DbProxy, type ModelProxy, startDbProxy, startModelProxy } from './timing-proxies.ts';

const PUBMEDQA = new URL('../../../shared/data/pubmedqa/pqal_dev.json', import.meta.url).pathname;

export interface Question {
  question: string;
  /** The file whose abstract the question was written for. */
  file: string;
}

/** The first `count` PubMedQA questions, each with its abstract as a text file. */
export function pubmedCorpus(count: number): { files: { name: string; bytes: Uint8Array }[]; questions: Question[] } {
  const entries = Object.entries(
    JSON.parse(readFileSync(PUBMEDQA, 'utf8')) as Record<string, { QUESTION: string; CONTEXTS: string[] }>,
  ).slice(0, count);
  if (entries.length < count) throw new Error(`PubMedQA has only ${entries.length} questions`);
  const encoder = new TextEncoder();
  return {
    files: entries.map(([id, entry]) => ({ name: `pubmedqa-${id}.txt`, bytes: encoder.encode(entry.CONTEXTS.join('\n\n')) })),
    questions: entries.map(([id, entry]) => ({
      question: entry.QUESTION.replace(/\s+/gu, ' ').trim(),
      file: `pubmedqa-${id}.txt`,
    })),
  };
}

export interface QueryStack {
  bench: BenchStack;
  model: ModelProxy;
  db: DbProxy;
  stop(): Promise<void>;
}

/** With `database` postgres, on a fresh database of the server at TEST_DATABASE_URL, dropped afterwards. */
export async function startQueryStack(
  database: 'pglite' | 'postgres',
  apiVars: Record<string, string> = {},
): Promise<QueryStack> {
  let drop: (() => Promise<unknown>) | undefined;
  let databaseUrl: string | undefined;
  if (database === 'postgres') {
    const created = await createTestDatabase();
    if (!created) throw new Error('--database postgres: no PostgreSQL server answers at TEST_DATABASE_URL');
    ({ url: databaseUrl, drop } = created);
  }
  let proxies: { model: ModelProxy; db: DbProxy } | undefined;
  try {
    const bench = await startBenchStack({
      databaseUrl,
      beforeWorkers: async (stack) => {
        const model = await startModelProxy(new URL(stack.openaiBaseUrl).origin);
        const db = await startDbProxy(stack.databaseUrl).catch(async (error: unknown) => {
          await model.stop();
          throw error;
        });
        proxies = { model, db };
        return {
          vars: { api: { ...apiVars, OPENAI_BASE_URL: `${model.url}${new URL(stack.openaiBaseUrl).pathname}` } },
          databaseUrls: { api: db.url },
          stop: async () => {
            await db.stop();
            await model.stop();
          },
        };
      },
    });
    const { model, db } = proxies as NonNullable<typeof proxies>;
    return {
      bench,
      model,
      db,
      stop: async () => {
        await bench.stop();
        await drop?.();
      },
    };
  } catch (error) {
    await drop?.().catch(() => {});
    throw error;
  }
}
