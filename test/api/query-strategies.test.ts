import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client.ts';
import { type Cast, castUsers } from '../support/fixtures.ts';
import { ingestFile } from '../support/ingest.ts';

// A namespace built so that the three strategies must disagree: three near-copies of one
// passage that match the question best, a different passage that matches less, one that
// matches weakly (a single common word) and one that does not match at all.
const DOCUMENTS: Record<string, string> = {
  'copy-a.txt': 'A tidal barrage across an estuary generates electricity as the trapped tide flows out through turbines.',
  'copy-b.txt': 'A tidal barrage across an estuary generates electricity as the trapped tide flows out through its turbines.',
  'copy-c.txt': 'A tidal barrage across the estuary generates electricity as the trapped tide flows out through turbines.',
  'stream.txt':
    'Tidal stream generators are turbines in fast currents; unlike a barrage they need no dam to generate electricity.',
  'grid.txt': 'The electricity grid balances supply and demand every second of the day.',
  'solar.txt': 'Photovoltaic panels convert sunlight directly into direct current.',
};
const QUESTION = 'tidal barrage estuary electricity';

let cast: Cast;
let collectionId: string;

beforeAll(async () => {
  cast = await castUsers();
  // The admin owns this one, so it may also set the retrieval strategy.
  const created = await api('POST', '/collections/', { token: cast.admin.token, body: { name: 'Strategies' } });
  collectionId = created.body.id;
  const jobs = await Promise.all(
    Object.entries(DOCUMENTS).map(([name, text]) =>
      ingestFile(cast.admin.token, name, collectionId, new TextEncoder().encode(text)),
    ),
  );
  for (const job of jobs) expect(job.status).toBe('succeeded');
}, 60_000);

async function searchWith(strategy: 'similarity' | 'mmr' | 'threshold'): Promise<string[]> {
  const put = await api('PUT', `/collections/${collectionId}/config`, {
    token: cast.admin.token,
    body: { chunk_size: 1000, retrieval_strategy: strategy },
  });
  expect(put.status).toBe(200);
  const response = await api('POST', '/query/search', {
    token: cast.admin.token,
    body: { question: QUESTION, collection_id: collectionId, top_k: 5 },
  });
  expect(response.status).toBe(200);
  return response.body.sources.map((s: { source: string }) => s.source);
}

describe('the collection’s retrieval_strategy', () => {
  it('similarity: the top five by score, the near-copies first', async () => {
    const sources = await searchWith('similarity');
    expect(new Set(sources.slice(0, 3))).toEqual(new Set(['copy-a.txt', 'copy-b.txt', 'copy-c.txt']));
    expect(sources.slice(3)).toEqual(['stream.txt', 'grid.txt']);
  });

  it('mmr: the different passage moves up ahead of the near-copies', async () => {
    const sources = await searchWith('mmr');
    expect(sources[0]).toMatch(/^copy-/);
    expect(sources[1]).toBe('stream.txt');
    expect(sources).toHaveLength(5);
  });

  it('threshold: only the passages that match well enough, fewer than top_k', async () => {
    const sources = await searchWith('threshold');
    expect(new Set(sources)).toEqual(new Set(['copy-a.txt', 'copy-b.txt', 'copy-c.txt', 'stream.txt']));
  });

  it('threshold may return nothing: a question the collection says nothing about', async () => {
    await api('PUT', `/collections/${collectionId}/config`, {
      token: cast.admin.token,
      body: { chunk_size: 1000, retrieval_strategy: 'threshold' },
    });
    const response = await api('POST', '/query/search', {
      token: cast.admin.token,
      body: { question: 'how do I bake sourdough bread at home', collection_id: collectionId },
    });
    expect(response.body.sources).toEqual([]);
  });
});
