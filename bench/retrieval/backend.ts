/** One retrieval backend of bench/retrieval/retrieval.ts on its own stack: a collection, the corpus ingested, a pass per strategy. */

import { log } from '../harness/format.ts';
import { type BenchStack, createCollection, startBenchStack } from '../harness/stack.ts';
import { User } from '../harness/user.ts';
import { type Backend, NO_PREFIX, type RetrievalSettings } from './flags.ts';
import { ingestScifact } from './ingest.ts';
import { runQueries, type StrategyRun } from './queries.ts';
import { type BackendRun, reportPass } from './report.ts';
import type { Scifact } from './scifact.ts';

export const hasModel = (stack: BenchStack) => !stack.embeddings.startsWith('none');

/**
 * Starts the stack. `sparseOnly` names an embedding model the devstack cannot resolve (neither a directory
 * nor a hub id), which it answers by serving sparse vectors only: the way to get BM25 alone on a
 * machine that has a model.
 */
export async function startStack(sparseOnly: boolean): Promise<BenchStack> {
  const saved = process.env.DEVSTACK_EMBEDDING_MODEL;
  if (sparseOnly) process.env.DEVSTACK_EMBEDDING_MODEL = 'off';
  try {
    return await startBenchStack();
  } finally {
    if (saved === undefined) delete process.env.DEVSTACK_EMBEDDING_MODEL;
    else process.env.DEVSTACK_EMBEDDING_MODEL = saved;
  }
}

export async function runBackend(
  stack: BenchStack,
  backend: Backend,
  data: Scifact,
  settings: RetrievalSettings,
): Promise<BackendRun> {
  const user = new User(stack);
  await user.signUpAsAdmin();
  const collectionId = await createCollection(stack, user.token, `scifact-${backend}`);
  await user.putConfig(collectionId, settings.chunkSize, 'similarity');
  const ingest = await ingestScifact(user, collectionId, backend, data.docs, settings);

  const uploaded = new Set(data.docs.map((d) => d.id));
  const runs: StrategyRun[] = [];
  const pass = async (client: User, fusion: string) => {
    for (const strategy of settings.strategies) {
      log(
        `[${backend}/${fusion}] ${data.queries.length} queries, strategy ${strategy}, top_k ${settings.topK}, ${settings.queryConcurrency} in flight`,
      );
      const run = await runQueries(client, collectionId, backend, fusion, strategy, data, uploaded, settings);
      reportPass(run);
      runs.push(run);
    }
  };
  if (backend === 'sparse') await pass(user, 'sparse');
  // One index serves every fusion: an API worker per RETRIEVAL_FUSION queries it.
  else {
    for (const fusion of settings.fusions) {
      const [name = fusion, variant] = fusion.split('/');
      const api = await stack.startApi({
        RETRIEVAL_FUSION: name,
        ...(variant === NO_PREFIX ? { EMBEDDING_QUERY_PREFIX: 'none' } : {}),
      });
      try {
        await pass(user.at(api.url), fusion);
      } finally {
        await api.stop();
      }
    }
  }
  return { backend, embeddings: stack.embeddings, ingest, runs };
}
