import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnvFile } from '../../deploy/settings.ts';
import { settingNames, WORKERS } from '../../deploy/workers.ts';
import { userRoles } from '../../devstack/local/roles.ts';
import { describeDevSettings, readDevSettings, settingValues } from '../../devstack/local/user-settings.ts';

const root = new URL('../../', import.meta.url).pathname;

function project(devVars?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'dev-settings-'));
  if (devVars !== undefined) writeFileSync(join(dir, '.dev.vars'), devVars);
  return dir;
}

describe('npm run dev: settings from the shell and .dev.vars', () => {
  it('takes any setting from either, the shell winning, and gives each worker what it reads', () => {
    const dir = project('CORS_ORIGINS=http://from-file.example\nINGEST_BATCH_SIZE=5\nSCORING_SWEEP_AFTER_MINUTES=45\n');
    const settings = readDevSettings(dir, {
      CORS_ORIGINS: 'http://localhost:5173',
      RATE_LIMIT_PER_MINUTE: '30',
      PATH: '/usr/bin',
    });
    expect(settings.byWorker.api).toEqual({ CORS_ORIGINS: 'http://localhost:5173', RATE_LIMIT_PER_MINUTE: '30' });
    expect(settings.byWorker.ingest).toEqual({ INGEST_BATCH_SIZE: '5' });
    expect(settings.byWorker.scoring).toEqual({ SCORING_SWEEP_AFTER_MINUTES: '45' });
    expect(settings.given.get('CORS_ORIGINS')).toEqual({ value: 'http://localhost:5173', source: 'shell' });
    expect(settings.given.get('INGEST_BATCH_SIZE')).toEqual({ value: '5', source: '.dev.vars' });
    // The shell's other variables are not settings.
    expect(settings.given.has('PATH')).toBe(false);
  });

  it('reaches every worker that reads a shared setting', () => {
    const settings = readDevSettings(project(), {
      QSTASH_URL: 'http://127.0.0.1:9999/qstash',
      INGEST_TRUSTED_ORIGINS: 'http://wiki.lan',
    });
    for (const worker of WORKERS) {
      expect(settings.byWorker[worker.name].QSTASH_URL, worker.name).toBe('http://127.0.0.1:9999/qstash');
      expect('INGEST_TRUSTED_ORIGINS' in settings.byWorker[worker.name], worker.name).toBe(
        settingNames(worker).includes('INGEST_TRUSTED_ORIGINS'),
      );
    }
  });

  it('takes every setting .dev.vars.example names, from the shell alone', () => {
    const example = parseEnvFile(readFileSync(`${root}.dev.vars.example`, 'utf8'));
    const shell = Object.fromEntries(Object.keys(example).map((name) => [name, `value-of-${name}`]));
    const settings = readDevSettings(project(), shell);
    expect([...settings.given.keys()].sort()).toEqual(Object.keys(example).sort());
    expect(settings.unknown).toEqual([]);
  });

  it('leaves the model provider to the roles, so a shell OPENAI_API_KEY does not replace the devstack model server’s', () => {
    const settings = readDevSettings(project(), {
      OPENAI_API_KEY: 'sk-in-my-profile',
      CHAT_BASE_URL: 'http://127.0.0.1:11434/v1',
    });
    for (const worker of WORKERS) expect(settings.byWorker[worker.name]).toEqual({});
    expect(userRoles(settingValues(settings))).toEqual({});
  });

  it('takes a service’s key only with its URL, so a token kept for something else does not reach the devstack’s', () => {
    const settings = readDevSettings(project(), { QSTASH_TOKEN: 'another-project', UPSTASH_VECTOR_REST_TOKEN: 'x' });
    for (const worker of WORKERS) expect(settings.byWorker[worker.name]).toEqual({});
  });

  it('counts a blank as not given; a blank in the shell hides the file’s value', () => {
    const dir = project('CORS_ORIGINS=http://from-file.example\nRATE_LIMIT_PER_MINUTE=\n');
    const settings = readDevSettings(dir, { CORS_ORIGINS: '' });
    expect(settings.given.size).toBe(0);
    expect(settings.byWorker.api).toEqual({});
  });

  it('says what it took, from where and for which worker, hiding secrets, and names a misspelt one', () => {
    const dir = project(
      'RATE_LIMIT_PER_MINUTE=30\nHYPERDRIVE_ID=abc\nCORS_ORIGIN=http://typo.example\nOPENAI_API_KEY=sk-file-secret\nSCORING_WORKER_URL=https://rag-scoring.your-subdomain.workers.dev\n',
    );
    const settings = readDevSettings(dir, {
      CORS_ORIGINS: 'http://localhost:5173',
      QSTASH_TOKEN: 'qstash-secret-token',
      CHAT_MODEL: 'gpt-4o-mini',
      VISION_BASE_URL: 'http://127.0.0.1:11434/v1',
    });
    const roles = userRoles(settingValues(settings));
    const text = describeDevSettings(settings, roles).join('\n');
    expect(text).not.toContain('qstash-secret-token');
    expect(text).not.toContain('sk-file-secret');
    const line = (name: string) => text.split('\n').find((row) => row.trimStart().startsWith(`${name} `)) ?? '';
    expect(line('CORS_ORIGINS')).toMatch(/http:\/\/localhost:5173\s+shell\s+→ the api worker$/);
    expect(line('RATE_LIMIT_PER_MINUTE')).toMatch(/30\s+\.dev\.vars\s+→ the api worker$/);
    expect(line('QSTASH_TOKEN')).toMatch(/\(secret, hidden\)\s+shell\s+→ ignored: QSTASH_URL is not set/);
    expect(line('OPENAI_API_KEY')).toMatch(/\(secret, hidden\)\s+\.dev\.vars\s+→ the chat role$/);
    expect(line('CHAT_MODEL')).toMatch(/→ the chat role$/);
    expect(line('VISION_BASE_URL')).toContain('ignored: VISION_MODEL is not set');
    expect(line('HYPERDRIVE_ID')).toContain('ignored: used by npm run deploy only');
    expect(line('CORS_ORIGIN')).toContain('read by no worker; is it misspelt?');
    expect(line('SCORING_WORKER_URL')).toMatch(/→ the scoring, api workers \(still \.dev\.vars\.example's placeholder\?\)$/);
    expect(line('RATE_LIMIT_PER_MINUTE')).not.toContain('placeholder');
    expect(describeDevSettings(readDevSettings(project(), {}), {})).toEqual([
      expect.stringContaining('Settings: none from the shell or .dev.vars'),
    ]);
  });
});
