import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalDeployment, startLocalDeployment } from '../../devstack/local/deployment.ts';
import { userRoles } from '../../devstack/local/roles.ts';
import { readDevSettings, settingValues } from '../../devstack/local/user-settings.ts';

// `npm run dev` as a new user runs it: settings in .dev.vars and in the shell, read from a project
// directory and an environment of the test's own, then the devstack and the three workers under
// `wrangler dev` started with them.
const dir = mkdtempSync(join(tmpdir(), 'dev-settings-'));
writeFileSync(
  join(dir, '.dev.vars'),
  'CORS_ORIGINS=http://from-file.example\nINGEST_BATCH_SIZE=5\nSCORING_SWEEP_AFTER_MINUTES=45\nOPENAI_API_KEY=sk-kept-in-a-file\n',
);
const shell = { CORS_ORIGINS: 'http://localhost:5173', RATE_LIMIT_PER_MINUTE: '37', INGEST_TRUSTED_ORIGINS: 'http://wiki.lan' };
let deployment: LocalDeployment;

beforeAll(async () => {
  const settings = readDevSettings(dir, shell);
  deployment = await startLocalDeployment({
    devstack: { embeddingModel: 'off', allowModelDownload: false },
    roles: userRoles(settingValues(settings)),
    settings: settings.byWorker,
    quiet: true,
  });
}, 180_000);

afterAll(() => deployment?.stop());

const preflight = (origin: string) =>
  fetch(`${deployment.api.url}/query/`, {
    method: 'OPTIONS',
    headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization' },
  });

describe('npm run dev with settings from the shell and .dev.vars', () => {
  it('starts each worker with the settings it reads, the shell over .dev.vars over the devstack’s own', () => {
    const { api, ingest, scoring } = deployment.vars;
    expect(api).toMatchObject({
      CORS_ORIGINS: 'http://localhost:5173',
      RATE_LIMIT_PER_MINUTE: '37',
      INGEST_TRUSTED_ORIGINS: 'http://wiki.lan',
    });
    expect(ingest).toMatchObject({ INGEST_BATCH_SIZE: '5', INGEST_TRUSTED_ORIGINS: 'http://wiki.lan' });
    expect(scoring).toMatchObject({ SCORING_SWEEP_AFTER_MINUTES: '45' });
    expect(ingest).not.toHaveProperty('CORS_ORIGINS');
    expect(scoring).not.toHaveProperty('INGEST_BATCH_SIZE');
    // A key with no role set is the provider's business, not the devstack model server's.
    for (const vars of [api, ingest, scoring]) {
      expect(vars.OPENAI_API_KEY).toBe(deployment.stack.keys.services.modelApiKey);
    }
  });

  it('gives CORS to the origin named in the shell, and not to the one .dev.vars named', async () => {
    const allowed = await preflight('http://localhost:5173');
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    const fromFile = await preflight('http://from-file.example');
    expect(fromFile.status).toBe(403);
    expect(fromFile.headers.get('access-control-allow-origin')).toBeNull();
  });
});
