import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hyperdriveCachingVerdict } from '../../deploy/hyperdrive.ts';
import { checkQStashRegion, QSTASH_REGIONS, qstashRegionOf } from '../../deploy/qstash-regions.ts';
import { parseSecretList, secretsCheck, staleSecrets } from '../../deploy/secrets.ts';
import { isSecretSetting, parseEnvFile, splitSettings } from '../../deploy/settings.ts';
import { WORKERS } from '../../deploy/workers.ts';
import type { WranglerOutput } from '../../deploy/wrangler.ts';

const root = new URL('../../', import.meta.url).pathname;
/** What the real wrangler 4.153 printed, recorded by test/fixtures/wrangler/record.ts. */
const recorded = (name: string) =>
  JSON.parse(readFileSync(`${root}test/fixtures/wrangler/${name}.json`, 'utf8')) as WranglerOutput;
const id = 'abcdef0123456789abcdef0123456789';
const example = parseEnvFile(readFileSync(`${root}.dev.vars.example`, 'utf8'));
const api = WORKERS.find((worker) => worker.name === 'api') as (typeof WORKERS)[number];

describe('Hyperdrive query caching, read from `wrangler hyperdrive get`', () => {
  it('refuses a config that caches, whether it says so or leaves caching at its default', () => {
    const on = hyperdriveCachingVerdict(id, recorded('hyperdrive-caching-on'));
    expect(on).toMatchObject({ status: 'fail', subject: `Hyperdrive ${id} (rag-db)` });
    expect(on.message).toContain('up to 60 s');
    expect(on.message).toContain(`npx wrangler hyperdrive update ${id} --caching-disabled`);
    expect(hyperdriveCachingVerdict(id, recorded('hyperdrive-caching-default')).status).toBe('fail');
  });

  it('passes one whose caching is disabled', () => {
    expect(hyperdriveCachingVerdict(id, recorded('hyperdrive-caching-off'))).toEqual({
      status: 'pass',
      subject: `Hyperdrive ${id} (rag-db)`,
      message: 'query caching is disabled',
    });
  });

  it('says it could not tell, and why, when wrangler is not logged in or offline; an unknown id is wrong', () => {
    const notLoggedIn = hyperdriveCachingVerdict(id, recorded('hyperdrive-not-logged-in'));
    expect(notLoggedIn.status).toBe('unchecked');
    expect(notLoggedIn.message).toContain('wrangler is not logged in');
    const offline = hyperdriveCachingVerdict(id, recorded('hyperdrive-offline'));
    expect(offline.status).toBe('unchecked');
    expect(offline.message).toContain('the Cloudflare API could not be reached');
    const unknown = hyperdriveCachingVerdict(id, recorded('hyperdrive-not-found'));
    expect(unknown.status).toBe('fail');
    expect(unknown.message).toContain('hyperdrive config not found [code: 2008]');
  });
});

describe('QStash regions', () => {
  it('knows each region by its URLs, with or without a trailing slash', () => {
    expect(qstashRegionOf('https://qstash.upstash.io/')?.name).toBe('EU');
    expect(qstashRegionOf('https://qstash-eu-central-1.upstash.io')?.name).toBe('EU');
    expect(qstashRegionOf('https://qstash-us-east-1.upstash.io')?.name).toBe('US');
    expect(qstashRegionOf('https://qstash-us-east-2.upstash.io')).toBeUndefined();
  });

  it('refuses a blank QSTASH_URL (the EU default) and a URL that is no region, naming the regions', () => {
    const blank = checkQStashRegion('');
    expect(blank.status).toBe('fail');
    expect(blank.message).toContain('a US account cannot use');
    const wrong = checkQStashRegion('https://qstash.example.com');
    expect(wrong.status).toBe('fail');
    for (const region of QSTASH_REGIONS) expect(wrong.message).toContain(region.urls[0]);
    expect(checkQStashRegion('https://qstash-us-east-1.upstash.io').status).toBe('pass');
  });
});

describe('secrets and plain variables', () => {
  it('uploads keys and tokens as secrets and every other setting as a plain variable', () => {
    const secretNames = Object.keys(example).filter(isSecretSetting).sort();
    expect(secretNames).toEqual([
      'CHAT_API_KEY',
      'EMBEDDING_API_KEY',
      'JUDGE_API_KEY',
      'OPENAI_API_KEY',
      'QSTASH_CURRENT_SIGNING_KEY',
      'QSTASH_NEXT_SIGNING_KEY',
      'QSTASH_TOKEN',
      'READY_TOKEN',
      'RERANK_API_KEY',
      'SUPABASE_ANON_KEY',
      'SUPABASE_SERVICE_ROLE_KEY',
      'UPSTASH_REDIS_REST_TOKEN',
      'UPSTASH_VECTOR_REST_TOKEN',
      'VISION_API_KEY',
    ]);
    const { secrets, vars } = splitSettings(api, { ...example, CORS_ORIGINS: 'https://app.example.com' });
    expect(secrets).toMatchObject({ OPENAI_API_KEY: example.OPENAI_API_KEY, QSTASH_TOKEN: example.QSTASH_TOKEN });
    expect(vars).toMatchObject({ CORS_ORIGINS: 'https://app.example.com', QSTASH_URL: 'https://qstash.upstash.io' });
    expect(Object.keys(vars).filter(isSecretSetting)).toEqual([]);
    // Blank settings are sent neither way, so the default applies and a setting once given is removed.
    expect(Object.keys({ ...secrets, ...vars })).not.toContain('JUDGE_MODEL');
  });

  it('reads the secrets a worker holds; a worker never deployed holds none; a failed read says why', () => {
    expect(parseSecretList(recorded('secret-list'))).toEqual({ names: ['CORS_ORIGINS', 'OLD_SETTING', 'OPENAI_API_KEY'] });
    expect(parseSecretList(recorded('secret-list-new-worker'))).toEqual({ names: [] });
    expect(parseSecretList(recorded('secret-list-not-logged-in'))).toEqual({
      unknown: 'wrangler is not logged in (npx wrangler login, or set CLOUDFLARE_API_TOKEN)',
    });
  });

  it('removes what left the file: a name now sent as a variable before the upload, the rest after it', () => {
    const upload = splitSettings(api, { ...example, CORS_ORIGINS: 'https://app.example.com' });
    expect(staleSecrets(['CORS_ORIGINS', 'OLD_SETTING', 'OPENAI_API_KEY'], upload)).toEqual({
      beforeUpload: ['CORS_ORIGINS'],
      afterUpload: ['OLD_SETTING'],
    });
    const check = secretsCheck('api', parseSecretList(recorded('secret-list')), upload);
    expect(check.status).toBe('pass');
    expect(check.message).toContain('the deploy removes CORS_ORIGINS, OLD_SETTING (CORS_ORIGINS now plain variables;');
    expect(secretsCheck('api', parseSecretList(recorded('secret-list-not-logged-in')), upload).status).toBe('unchecked');
  });
});
