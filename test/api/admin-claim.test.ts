import { beforeAll, describe, expect, it } from 'vitest';
import { api, mintToken, signUp, type TestUser } from '../support/client.ts';

// Only the boolean true in app_metadata.is_admin makes an operator; a string or a number,
// however it reads, is an ordinary user.
describe('app_metadata.is_admin', () => {
  let owner: TestUser;
  let collectionId: string;
  beforeAll(async () => {
    owner = await signUp('claim-owner');
    collectionId = (await api('POST', '/collections/', { token: owner.token, body: { name: 'Claims' } })).body.id;
  });

  it.each([
    { claim: 'false', status: 403 },
    { claim: 'true', status: 403 },
    { claim: 1, status: 403 },
    { claim: null, status: 403 },
    { claim: true, status: 200 },
  ])('$claim gives $status on the config endpoints', async ({ claim, status }) => {
    const user = await signUp('claim');
    const token = await mintToken({ sub: user.id, email: user.email, app_metadata: { is_admin: claim } });
    expect((await api('GET', `/collections/${collectionId}/config`, { token })).status).toBe(status);
    const put = await api('PUT', `/collections/${collectionId}/config`, {
      token,
      body: { chunk_size: 500, retrieval_strategy: 'mmr' },
    });
    expect(put.status).toBe(status);
  });
});
