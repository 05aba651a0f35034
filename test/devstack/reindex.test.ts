import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModels } from '#core/adapters/models.ts';
import { createVectorStore } from '#core/adapters/vectors.ts';
import { namespaceFor } from '#core/namespaces.ts';
import { encodeQuery } from '#retrieval/sparse.ts';
import { reembedAll } from '../../deploy/reembed.ts';
import { freePort } from '../../devstack/ports.ts';
import { type Devstack, startDevstack } from '../../devstack/stack.ts';

// `npm run reindex` after the embedding model changed: a .data/ made sparse-only is refused by name,
// then moved aside, and every indexed chunk gets dense and sparse vectors again from Postgres.
let dataDir: string;
const userId = randomUUID();
const documentId = randomUUID();
const CHUNKS = [
  { text: 'Neap tides come at the quarter moons, when the sun and moon pull at right angles.', state: 'done' },
  { text: 'Spring tides follow the new and full moons and have the widest range.', state: 'done' },
  { text: 'A chunk whose embedding never finished.', state: 'pending' },
  { text: null, state: 'failed' },
];

async function stack(options: { model: 'off' | undefined; newVectorIndex?: boolean }): Promise<Devstack> {
  return startDevstack({
    dataDir,
    apiPort: await freePort(),
    postgresPort: await freePort(),
    embeddingModel: options.model,
    newVectorIndex: options.newVectorIndex,
  });
}

const clients = (running: Devstack) => ({
  sql: postgres(running.databaseUrl, { max: 1, prepare: false, onnotice: () => {} }),
  vectors: createVectorStore({ url: running.vectorUrl, token: running.keys.services.vectorToken }),
});

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'reindex-'));
  // What ingestion left with no model: rows in Postgres, sparse vectors in the index.
  const sparse = await stack({ model: 'off' });
  const { sql, vectors } = clients(sparse);
  try {
    await sql`insert into auth.users (id, email) values (${userId}, 'reindex@example.test')`;
    await sql`insert into documents (id, user_id, name, source_kind, content_type, chunk_size, chunk_count)
              values (${documentId}, ${userId}, 'tides.txt', 'upload', 'text/plain', 1000, 2)`;
    for (const [i, chunk] of CHUNKS.entries()) {
      await sql`insert into document_chunks (document_id, chunk_index, vector_id, chunk_type, text, state)
                values (${documentId}, ${i}, ${`${documentId}:${i}`}, 'text', ${chunk.text}, ${chunk.state})`;
    }
    expect(await reembedAll({ sql, vectors, embed: null, log: () => {} })).toEqual({ documents: 1, chunks: 2 });
  } finally {
    await sql.end();
    await sparse.stop();
  }
}, 120_000);

afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('npm run reindex', () => {
  it('a model on a sparse-only .data/ is refused, naming the command', async () => {
    await expect(stack({ model: undefined })).rejects.toThrow(/SPARSE index .*npm run reindex/s);
  }, 60_000);

  it('moves the old index aside and fills a new one with dense and sparse vectors of every indexed chunk', async () => {
    const hybrid = await stack({ model: undefined, newVectorIndex: true });
    const { sql, vectors } = clients(hybrid);
    try {
      expect(hybrid.embeddings).not.toBeNull();
      expect(readdirSync(dataDir).filter((name) => name.startsWith('vector.SPARSE-0-'))).toHaveLength(1);
      const models = createModels({
        baseUrl: hybrid.openaiBaseUrl,
        apiKey: hybrid.keys.services.modelApiKey,
        embedding: { model: (hybrid.embeddings as { model: string }).model },
      });
      const lines: string[] = [];
      const result = await reembedAll({ sql, vectors, embed: models.embed, log: (line) => lines.push(line) });
      expect(result).toEqual({ documents: 1, chunks: 2 });
      expect(lines).toEqual(['1/1 documents, 2 chunks: tides.txt']);

      // A question sharing no word with the passage finds it by meaning: the dense vectors are there.
      const question = 'when is the difference between high and low water smallest?';
      const [vector] = await (models.embed as NonNullable<typeof models.embed>)([question]);
      const found = await vectors.query(namespaceFor(null, userId), {
        vector,
        sparseVector: encodeQuery(question),
        topK: 5,
        mode: 'dense',
      });
      expect(found.map((m) => m.id).sort()).toEqual([`${documentId}:0`, `${documentId}:1`]);
      expect(found.find((m) => m.id === `${documentId}:0`)?.metadata).toMatchObject({ source: 'tides.txt', chunk_index: 0 });

      // Run again, as after a crash: the same vectors, nothing doubled.
      await reembedAll({ sql, vectors, embed: models.embed, log: () => {} });
      const again = await vectors.query(namespaceFor(null, userId), { vector, sparseVector: encodeQuery(question), topK: 10 });
      expect(again).toHaveLength(2);
    } finally {
      await sql.end();
      await hybrid.stop();
    }
    expect(existsSync(join(dataDir, 'vector'))).toBe(true);
  }, 120_000);
});
