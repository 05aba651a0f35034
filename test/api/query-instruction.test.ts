import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { BGE_QUERY_INSTRUCTION, queryPrefixFor } from '#retrieval/query-instruction.ts';
import { api, signUp, stack, type TestUser } from '../support/client.ts';
import { ingestFile } from '../support/ingest.ts';

/**
 * The embedding model's query instruction, through the real workers: the API embeds a question with the
 * prefix its model asks for (bge-small-en-v1.5, the devstack's default: the model card's instruction), and
 * the ingest worker embeds passages bare. The devstack's model server counts what it was sent.
 */
async function embeddedContaining(text: string): Promise<{ inputs: number; distinct: number }> {
  const url = `${stack.openaiBaseUrl.replace(/\/v1$/, '')}/devstack/embedded?containing=${encodeURIComponent(text)}`;
  const response = await fetch(url, { headers: { Authorization: `Bearer ${stack.modelApiKey}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as { inputs: number; distinct: number };
}

const model = stack.apiVars.EMBEDDING_MODEL;
let user: TestUser;

beforeAll(async () => {
  user = await signUp('instruction');
});

describe.skipIf(!model)('the query instruction', () => {
  it('goes before the question the API embeds, and never before a passage', async () => {
    const prefix = queryPrefixFor(model, stack.apiVars.EMBEDDING_QUERY_PREFIX);
    if (model === 'bge-small-en-v1.5') expect(prefix).toBe(BGE_QUERY_INSTRUCTION);
    const marker = `Quorvant${randomUUID().slice(0, 8)}`;
    const job = await ingestFile(user.token, 'lamp.txt', undefined, `${marker} keeps the lamp lit on the headland.`);
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    // The passage, embedded as it is: the only text with the marker so far, and none with the instruction before it.
    expect(await embeddedContaining(marker)).toEqual({ inputs: 1, distinct: 1 });

    const question = `Who keeps the lamp lit at ${marker}?`;
    const search = await api('POST', '/query/search', { token: user.token, body: { question, top_k: 3 } });
    expect(search.status, JSON.stringify(search.body)).toBe(200);
    expect(search.body.sources[0]?.text).toContain(marker);
    // One more text with the marker: the question, with the prefix before it and nothing else.
    expect(await embeddedContaining(marker)).toEqual({ inputs: 2, distinct: 2 });
    expect(await embeddedContaining(`${prefix}${question}`)).toEqual({ inputs: 1, distinct: 1 });
    if (prefix) expect(await embeddedContaining(`${prefix}${marker}`)).toEqual({ inputs: 0, distinct: 0 });
  }, 120_000);
});
