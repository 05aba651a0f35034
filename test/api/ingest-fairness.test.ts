import { randomUUID } from 'node:crypto';
import { Client } from '@upstash/qstash';
import { beforeAll, describe, expect, it } from 'vitest';
import { INGEST_PARALLELISM_PER_USER } from '#core/limits.ts';
import { ingestFlowKey } from '#core/messages/ingest.ts';
import { namespaceFor } from '#core/namespaces.ts';
import { db, signUp, stack, type TestUser } from '../support/client.ts';
import { ingestFile, vectorIndex } from '../support/ingest.ts';

/**
 * Fairness between users, through the real workers and the devstack: each user's ingest steps run under
 * their own QStash flow-control key, and a document that repeats itself is embedded once per distinct
 * text. bench/hostile/tenant-fairness.ts measures what this buys another user while one uploads a hostile set.
 */

/** What the devstack's model server embedded so far of texts containing `marker` (devstack/models/embedded-texts.ts). */
async function embeddedContaining(marker: string): Promise<{ inputs: number; distinct: number }> {
  const url = `${stack.openaiBaseUrl.replace(/\/v1$/, '')}/devstack/embedded?containing=${encodeURIComponent(marker)}`;
  const response = await fetch(url, { headers: { Authorization: `Bearer ${stack.modelApiKey}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as { inputs: number; distinct: number };
}

interface ChunkRow {
  chunk_index: number;
  vector_id: string;
  text: string;
  same_as: number | null;
  state: string;
}

const chunksOf = (documentId: string) =>
  db()<ChunkRow[]>`select chunk_index, vector_id, text, same_as, state from document_chunks
                    where document_id = ${documentId} order by chunk_index`;

async function documentOf(jobId: string): Promise<string> {
  const [row] = await db()<{ document_id: string }[]>`select document_id from ingest_jobs where id = ${jobId}`;
  return row!.document_id;
}

let user: TestUser;
beforeAll(async () => {
  user = await signUp('fairness');
});

describe('a document that repeats itself', () => {
  it('is embedded once per distinct text, while every chunk keeps a vector, an id and metadata of its own', async () => {
    const marker = `Quillan${randomUUID().slice(0, 8)}`;
    // One sentence 6,000 times: about 240 chunks of the same text but the last, more than one page of copies.
    const job = await ingestFile(user.token, 'repeats.txt', undefined, `${marker} keeps the light on the point. `.repeat(6000));
    expect(job.status, job.error_message ?? '').toBe('succeeded');

    const chunks = await chunksOf(await documentOf(job.job_id));
    const distinct = new Set(chunks.map((chunk) => chunk.text)).size;
    expect(chunks.length).toBeGreaterThan(200);
    expect(distinct).toBeLessThanOrEqual(3);
    expect(chunks.every((chunk) => chunk.state === 'done')).toBe(true);
    // Each copy names the first chunk of its text.
    const firstOf = new Map<string, number>();
    for (const chunk of chunks) {
      const first = firstOf.get(chunk.text);
      expect(chunk.same_as).toBe(first ?? null);
      if (first === undefined) firstOf.set(chunk.text, chunk.chunk_index);
    }

    expect(await embeddedContaining(marker)).toEqual({ inputs: distinct, distinct });

    const vectors = await vectorIndex()
      .namespace(namespaceFor(null, user.id))
      .fetch(
        chunks.map((chunk) => chunk.vector_id),
        { includeMetadata: true, includeVectors: true },
      );
    expect(vectors).toHaveLength(chunks.length);
    for (const [i, vector] of vectors.entries()) {
      const chunk = chunks[i]!;
      expect(vector?.id).toBe(chunk.vector_id);
      expect(vector?.metadata).toMatchObject({ chunk_index: chunk.chunk_index, text: chunk.text, source: 'repeats.txt' });
      // The same text, the same values: a copy carries its first chunk's vector.
      const first = vectors[firstOf.get(chunk.text)!]!;
      expect(vector?.vector).toEqual(first.vector);
      expect(vector?.sparseVector).toEqual(first.sparseVector);
    }
  });
});

describe('flow control per user', () => {
  it("runs a user's steps under their own QStash flow-control key, with the parallelism set per user", async () => {
    const job = await ingestFile(user.token, 'short.txt', undefined, 'Marrow Island keeps its light for ships.');
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const qstash = new Client({ baseUrl: stack.qstashUrl, token: stack.qstashToken, retry: false });
    const info = await qstash.flowControl.get(ingestFlowKey(user.id));
    expect(info).toMatchObject({ flowControlKey: `ingest-${user.id}`, parallelismMax: INGEST_PARALLELISM_PER_USER });
    expect(ingestFlowKey(user.id)).toMatch(/^[A-Za-z0-9._-]+$/);
  });
});
