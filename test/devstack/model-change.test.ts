import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Index } from '@upstash/vector';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModels } from '#core/adapters/models.ts';
import { createVectorStore } from '#core/adapters/vectors.ts';
import { namespaceFor } from '#core/namespaces.ts';
import { encodeQuery } from '#retrieval/sparse.ts';
import { reembedAll } from '../../deploy/reembed.ts';
import { defaultSharedModelsDir } from '../../devstack/models/server.ts';
import { freePort } from '../../devstack/ports.ts';
import { type Devstack, startDevstack } from '../../devstack/stack.ts';

// Two models of the same dimension (384): the dimension check cannot tell their indexes apart, the model's
// name must. An index filled by bge-small-en-v1.5 is refused by all-MiniLM-L6-v2, naming both and
// `npm run reindex`, until reindexing moves it aside and writes every chunk again with the new model.
const BGE = 'bge-small-en-v1.5';
const MINILM = 'all-MiniLM-L6-v2';

/** shared/weights beside the repository, or where CI's DEVSTACK_EMBEDDING_MODEL found the default model. */
function sharedWeights(): string | undefined {
  const candidates = [defaultSharedModelsDir()];
  if (process.env.DEVSTACK_EMBEDDING_MODEL) candidates.push(dirname(process.env.DEVSTACK_EMBEDDING_MODEL));
  return candidates.find((dir) => existsSync(join(dir, BGE, 'config.json')) && existsSync(join(dir, MINILM, 'config.json')));
}

const weights = sharedWeights();
if (!weights && process.env.CI) throw new Error(`${BGE} and ${MINILM} are not in shared/weights: CI must have both`);

let dataDir: string;
const userId = randomUUID();
const documentId = randomUUID();
const namespace = namespaceFor(null, userId);
const PASSAGES = [
  'Neap tides come at the quarter moons, when the sun and moon pull at right angles.',
  'Spring tides follow the new and full moons and have the widest range.',
];

const cosine = (a: readonly number[], b: readonly number[]) => {
  let dot = 0;
  for (const [i, v] of a.entries()) dot += v * (b[i] ?? 0);
  return dot / Math.sqrt(a.reduce((n, v) => n + v * v, 0) * b.reduce((n, v) => n + v * v, 0));
};

async function stack(model: string, newVectorIndex = false): Promise<Devstack> {
  return startDevstack({
    dataDir,
    apiPort: await freePort(),
    postgresPort: await freePort(),
    embeddingModel: join(weights as string, model),
    newVectorIndex,
  });
}

function clients(running: Devstack) {
  const embedding = running.embeddings as { model: string };
  return {
    sql: postgres(running.databaseUrl, { max: 1, prepare: false, onnotice: () => {} }),
    vectors: createVectorStore({ url: running.vectorUrl, token: running.keys.services.vectorToken }),
    embed: createModels({
      baseUrl: running.openaiBaseUrl,
      apiKey: running.keys.services.modelApiKey,
      embedding: { model: embedding.model },
    }).embed as (texts: string[]) => Promise<number[][]>,
  };
}

beforeAll(async () => {
  if (!weights) return;
  dataDir = await mkdtemp(join(tmpdir(), 'model-change-'));
  // What ingestion left with bge-small: chunks in Postgres, their dense and sparse vectors in the index.
  const first = await stack(BGE);
  const { sql, vectors, embed } = clients(first);
  try {
    expect(first.embeddings).toEqual({ model: BGE, dimension: 384 });
    await sql`insert into auth.users (id, email) values (${userId}, 'model-change@example.test')`;
    await sql`insert into documents (id, user_id, name, source_kind, content_type, chunk_size, chunk_count)
              values (${documentId}, ${userId}, 'tides.txt', 'upload', 'text/plain', 1000, 2)`;
    for (const [i, text] of PASSAGES.entries()) {
      await sql`insert into document_chunks (document_id, chunk_index, vector_id, chunk_type, text, state)
                values (${documentId}, ${i}, ${`${documentId}:${i}`}, 'text', ${text}, 'done')`;
    }
    expect(await reembedAll({ sql, vectors, embed, log: () => {} })).toEqual({ documents: 1, chunks: 2 });
  } finally {
    await sql.end();
    await first.stop();
  }
}, 180_000);

afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe.skipIf(!weights)('a model change refused until npm run reindex', () => {
  it('the same model opens its index again', async () => {
    const again = await stack(BGE);
    await again.stop();
  }, 60_000);

  it('another model of the same dimension is refused, naming both models and the command', async () => {
    const refused = stack(MINILM);
    await expect(refused).rejects.toThrow(new RegExp(`embedding model ${BGE}, not of the configured ${MINILM}`));
    await expect(refused).rejects.toThrow(/npm run reindex/);
    expect(readdirSync(dataDir).filter((name) => name.startsWith('vector.'))).toEqual([]);
  }, 60_000);

  it('reindexing sets the old index aside and fills a new one with the new model, which then opens', async () => {
    const moved = await stack(MINILM, true);
    const { sql, vectors, embed } = clients(moved);
    try {
      expect(moved.embeddings).toEqual({ model: MINILM, dimension: 384 });
      expect(readdirSync(dataDir).filter((name) => name.startsWith('vector.HYBRID-384-'))).toHaveLength(1);
      expect(await reembedAll({ sql, vectors, embed, log: () => {} })).toEqual({ documents: 1, chunks: 2 });
      // The dense vectors are all-MiniLM's now: each is close to what the model makes of its passage (the indexed
      // text also carries the document's context line, so not equal), where bge-small's, from another space, are not.
      const index = new Index({ url: moved.vectorUrl, token: moved.keys.services.vectorToken });
      const ids = PASSAGES.map((_, i) => `${documentId}:${i}`);
      const stored = await index.namespace(namespace).fetch(ids, { includeVectors: true });
      const fresh = await embed(PASSAGES);
      for (const [i, vector] of fresh.entries()) expect(cosine(stored[i]?.vector ?? [], vector)).toBeGreaterThan(0.9);
      // And a question sharing no word with the passages finds both by meaning alone.
      const question = 'when is the difference between high and low water smallest?';
      const [vector] = await embed([question]);
      const found = await vectors.query(namespace, { vector, sparseVector: encodeQuery(question), topK: 5, mode: 'dense' });
      expect(found.map((m) => m.id).sort()).toEqual([`${documentId}:0`, `${documentId}:1`]);
    } finally {
      await sql.end();
      await moved.stop();
    }
    // Now the new index is all-MiniLM's, and bge-small is the one refused.
    const reopened = await stack(MINILM);
    await reopened.stop();
    await expect(stack(BGE)).rejects.toThrow(new RegExp(`embedding model ${MINILM}, not of the configured ${BGE}`));
  }, 180_000);
});
