import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWorker, startWorker } from '../../devstack/local/worker.ts';
import { freePort } from '../../devstack/ports.ts';
import { api, signUp, stack, type TestUser } from '../support/client.ts';
import { ingestFile } from '../support/ingest.ts';
import { SECOND_PROVIDER_PREFIX, type SecondProvider, startSecondProvider } from '../support/second-provider.ts';

// One role on another provider: an API worker whose chat role points at a second OpenAI-compatible
// server (CHAT_BASE_URL, CHAT_API_KEY), while embeddings and everything else stay on the shared
// endpoint, the devstack's.
let provider: SecondProvider;
let worker: RunningWorker;
let owner: TestUser;
let collectionId: string;

beforeAll(async () => {
  provider = await startSecondProvider();
  worker = await startWorker({
    config: 'wrangler.toml',
    port: await freePort(),
    vars: { ...stack.apiVars, CHAT_BASE_URL: provider.baseUrl, CHAT_API_KEY: 'second-key', CHAT_MODEL: 'second-model' },
    hyperdrive: { HYPERDRIVE: stack.databaseUrl },
    persistTo: join(stack.persistDir, 'providers'),
    quiet: true,
  });
  owner = await signUp('providers');
  collectionId = (await api('POST', '/collections/', { token: owner.token, body: { name: 'Two providers' } })).body.id;
  const job = await ingestFile(
    owner.token,
    'keepers.txt',
    collectionId,
    'Osric Penhallow kept the Marrow Island light for thirty-one years.',
  );
  expect(job.status).toBe('succeeded');
});

afterAll(async () => {
  await worker?.stop();
  await provider?.stop();
});

describe('a role on its own provider', () => {
  it('sends the chat role to its own endpoint, with its own key and model, and nothing else there', async () => {
    const response = await fetch(`${worker.url}/query/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ question: 'Who kept the Marrow Island light?', collection_id: collectionId }),
    });
    const stream = await response.text();
    const answer = [...stream.matchAll(/^event: token\ndata: (.*)$/gm)].map((m) => JSON.parse(m[1] as string).token).join('');
    expect(answer).toBe(`${SECOND_PROVIDER_PREFIX}keepers.txt [1]`);

    expect(provider.requests.map((r) => r.path)).toEqual(['/v1/chat/completions']);
    const [chat] = provider.requests;
    expect(chat?.authorization).toBe('Bearer second-key');
    expect(chat?.body.model).toBe('second-model');
    expect(JSON.stringify(chat?.body.messages)).toContain('Osric Penhallow');

    // Retrieval ran where it always does. With an embedding model the question was embedded, and since
    // the second provider refuses embeddings (404, hence a 502 here), a 200 means the devstack did it.
    const search = await fetch(`${worker.url}/query/search`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ question: 'Marrow Island keeper', collection_id: collectionId }),
    });
    expect(search.status).toBe(200);
    expect((await search.json()).sources[0].source).toBe('keepers.txt');
    expect(provider.requests).toHaveLength(1);
  });

  it('records the answering provider and model in the evaluation', async () => {
    const port = new URL(provider.baseUrl).port;
    const deadline = Date.now() + 10_000;
    let engines: string[] = [];
    while (Date.now() < deadline) {
      const list = await api('GET', `/evals/${collectionId}`, { token: owner.token });
      engines = list.body.map((e: { engine: string }) => e.engine);
      if (engines.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(engines).toEqual([`127.0.0.1:${port}/second-model`]);
  });
});
