import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  parseEnvFile,
  problemsOf,
  settingsFor,
  settingsTable,
  unknownSettings,
  withHyperdriveId,
} from '../../deploy/settings.ts';
import { settingNames, WORKERS } from '../../deploy/workers.ts';

const root = new URL('../../', import.meta.url).pathname;
const read = (path: string) => readFileSync(`${root}${path}`, 'utf8');
const worker = (name: string) => WORKERS.find((w) => w.name === name) as (typeof WORKERS)[number];
const example = parseEnvFile(read('.dev.vars.example'));

describe('npm run deploy: one settings file, split by worker', () => {
  it('.dev.vars.example names every setting of every worker, and satisfies each as it stands', () => {
    for (const w of WORKERS) {
      expect(
        settingNames(w).filter((name) => !(name in example)),
        w.name,
      ).toEqual([]);
      expect(problemsOf(w, example), w.name).toEqual([]);
    }
    expect(unknownSettings(WORKERS, example)).toEqual([]);
  });

  it('gives each worker only what it reads', () => {
    const scoring = settingsFor(worker('scoring'), example);
    expect(Object.keys(scoring)).toContain('SCORING_WORKER_URL');
    expect(Object.keys(scoring)).not.toContain('SUPABASE_SERVICE_ROLE_KEY');
    expect(Object.keys(settingsFor(worker('api'), example))).not.toContain('QSTASH_CURRENT_SIGNING_KEY');
    expect(Object.keys(settingsFor(worker('ingest'), example))).not.toContain('HYPERDRIVE_ID');
  });

  it('finds, by name and never by value, what a worker would refuse at its first request', () => {
    const { SCORING_WORKER_URL: _, ...withoutScoring } = example;
    expect(problemsOf(worker('api'), withoutScoring)).toEqual(['SCORING_WORKER_URL: required for a complete deployment']);
    expect(problemsOf(worker('scoring'), withoutScoring)).toEqual([expect.stringMatching(/^SCORING_WORKER_URL: /)]);
    const secret = 'not a url but a secret';
    const problems = problemsOf(worker('ingest'), { ...example, SUPABASE_URL: secret });
    expect(problems).toEqual([expect.stringMatching(/^SUPABASE_URL: /)]);
    expect(problems.join()).not.toContain(secret);
    expect(unknownSettings(WORKERS, { ...example, OPENAI_APIKEY: 'x' })).toEqual(['OPENAI_APIKEY']);
  });

  it('puts the Hyperdrive id into each committed wrangler config, and refuses one without the placeholder', () => {
    const id = 'abcdef0123456789abcdef0123456789';
    for (const w of WORKERS) {
      const toml = withHyperdriveId(read(w.config), id);
      expect(toml).toContain(`id = "${id}"`);
      expect(toml).not.toMatch(/"0{32}"/);
    }
    expect(() => withHyperdriveId(withHyperdriveId(read('wrangler.toml'), id), id)).toThrow(/placeholder/);
  });

  it('parses quotes, comments, export and blank values, and names a bad line', () => {
    expect(parseEnvFile('# c\nexport A="x y"\nB=\nC=\'z\'\n')).toEqual({ A: 'x y', B: '', C: 'z' });
    expect(() => parseEnvFile('A=1\nnot a setting\n')).toThrow('line 2 is not KEY=VALUE');
  });

  it('README.md carries the table of which setting goes on which worker, as the workers validate them', () => {
    expect(read('README.md')).toContain(settingsTable(WORKERS));
  });
});
