import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readUserSettings, roleVars, userRoles } from '../../devstack/local/roles.ts';

describe('npm run dev: the roles the user points elsewhere', () => {
  it('takes a role when its model is set, with its own endpoint, else the shared one, else OpenAI', () => {
    const roles = userRoles({
      OPENAI_API_KEY: 'sk-shared',
      CHAT_MODEL: 'gpt-4o-mini',
      VISION_MODEL: 'llava',
      VISION_BASE_URL: 'http://127.0.0.1:11434/v1',
      VISION_API_KEY: 'ollama',
    });
    expect(roles).toEqual({
      CHAT: { model: 'gpt-4o-mini', baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-shared' },
      VISION: { model: 'llava', baseUrl: 'http://127.0.0.1:11434/v1', apiKey: 'ollama' },
    });
    expect(roleVars(roles)).toMatchObject({
      CHAT_MODEL: 'gpt-4o-mini',
      CHAT_BASE_URL: 'https://api.openai.com/v1',
      VISION_API_KEY: 'ollama',
    });
    expect(userRoles({})).toEqual({});
  });

  it('names what is missing: a key, or the dimension the local index needs', () => {
    expect(() => userRoles({ JUDGE_MODEL: 'gpt-4o' })).toThrow('neither JUDGE_API_KEY nor OPENAI_API_KEY');
    expect(() => userRoles({ EMBEDDING_MODEL: 'text-embedding-3-small', OPENAI_API_KEY: 'k' })).toThrow('EMBEDDING_DIMENSIONS');
    expect(userRoles({ EMBEDDING_MODEL: 'm', EMBEDDING_DIMENSIONS: '768', OPENAI_API_KEY: 'k' }).EMBEDDING?.dimensions).toBe(768);
  });

  it('reads .dev.vars, with the shell winning', () => {
    const dir = mkdtempSync(join(tmpdir(), 'roles-'));
    writeFileSync(join(dir, '.dev.vars'), 'CHAT_MODEL=from-file\nOPENAI_API_KEY="file-key"\n');
    expect(readUserSettings(dir, { CHAT_MODEL: 'from-shell' })).toMatchObject({
      CHAT_MODEL: 'from-shell',
      OPENAI_API_KEY: 'file-key',
    });
    expect(readUserSettings(join(dir, 'nowhere'), {})).toEqual({});
  });
});
