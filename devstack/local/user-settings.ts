import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { DEPLOY_SETTINGS, isSecretSetting, settingsFor } from '../../deploy/settings.ts';
import { settingNames, WORKERS } from '../../deploy/workers.ts';
import { ROLES, type UserRoles } from './roles.ts';

type WorkerName = (typeof WORKERS)[number]['name'];
export type SettingSource = 'shell' | '.dev.vars';

/**
 * The model provider's settings. They reach the workers through the roles (roles.ts): a role the user
 * names a model for goes to their provider, every other role stays on the devstack's stand-ins. Passed
 * straight on, an OPENAI_API_KEY kept in a shell profile would replace the key of the devstack's model
 * server and break every role still on it.
 */
const PROVIDER_SETTINGS = new Set([
  'OPENAI_BASE_URL',
  'OPENAI_API_KEY',
  'EMBEDDING_DIMENSIONS',
  ...ROLES.flatMap((role) => [`${role}_MODEL`, `${role}_BASE_URL`, `${role}_API_KEY`]),
]);

/**
 * A service's credentials, by the setting that points at the service. They are taken only with it: a
 * QSTASH_TOKEN left in a shell profile for another project, sent to the devstack's QStash, would make
 * every upload fail, while a user who points QSTASH_URL at the real QStash brings its token along.
 */
const CREDENTIALS: Record<string, string> = {
  QSTASH_TOKEN: 'QSTASH_URL',
  QSTASH_CURRENT_SIGNING_KEY: 'QSTASH_URL',
  QSTASH_NEXT_SIGNING_KEY: 'QSTASH_URL',
  SUPABASE_SERVICE_ROLE_KEY: 'SUPABASE_URL',
  SUPABASE_ANON_KEY: 'SUPABASE_URL',
  UPSTASH_VECTOR_REST_TOKEN: 'UPSTASH_VECTOR_REST_URL',
  UPSTASH_REDIS_REST_TOKEN: 'UPSTASH_REDIS_REST_URL',
};

export interface DevSettings {
  /** Every setting the user gave a value, with where it came from (the shell wins over .dev.vars). */
  given: Map<string, { value: string; source: SettingSource }>;
  /** Names in .dev.vars that no worker reads: most likely misspelt. */
  unknown: string[];
  /** What each worker gets from them directly, split by what it reads as `npm run deploy` splits them. */
  byWorker: Record<WorkerName, Record<string, string>>;
}

/**
 * `npm run dev`'s own settings: any setting of .dev.vars.example, from the shell or from .dev.vars beside
 * the project, the shell winning. Of the shell only the names some worker reads count (it holds much
 * else); a blank value counts as not given, so the worker's default applies, and a blank in the shell
 * hides the file's value.
 */
export function readDevSettings(root: string, env: NodeJS.ProcessEnv = process.env): DevSettings {
  const known = new Set<string>([...DEPLOY_SETTINGS, ...WORKERS.flatMap(settingNames)]);
  const file = `${root}/.dev.vars`;
  const fromFile = existsSync(file) ? parseEnv(readFileSync(file, 'utf8')) : {};
  const given = new Map<string, { value: string; source: SettingSource }>();
  for (const [name, value] of Object.entries(fromFile)) {
    if (value?.trim()) given.set(name, { value, source: '.dev.vars' });
  }
  for (const name of known) {
    const value = env[name];
    if (value === undefined) continue;
    if (value.trim()) given.set(name, { value, source: 'shell' });
    else given.delete(name);
  }
  const values = Object.fromEntries([...given].map(([name, { value }]) => [name, value]));
  const direct = Object.fromEntries(
    Object.entries(values).filter(
      ([name]) => !PROVIDER_SETTINGS.has(name) && !(name in CREDENTIALS && !given.has(CREDENTIALS[name] as string)),
    ),
  );
  return {
    given,
    unknown: [...given.keys()].filter((name) => !known.has(name)),
    byWorker: Object.fromEntries(WORKERS.map((worker) => [worker.name, settingsFor(worker, direct)])) as DevSettings['byWorker'],
  };
}

/** The settings as `roles.ts` reads them: names to values. */
export const settingValues = (settings: DevSettings) =>
  Object.fromEntries([...settings.given].map(([name, { value }]) => [name, value]));

/** Where one given setting went, in words. */
function destination(name: string, settings: DevSettings, roles: UserRoles): string {
  if (settings.unknown.includes(name)) return 'read by no worker; is it misspelt?';
  if ((DEPLOY_SETTINGS as readonly string[]).includes(name)) return 'ignored: used by npm run deploy only';
  const service = CREDENTIALS[name];
  if (service && !settings.given.has(service)) return `ignored: ${service} is not set, the devstack's service and key are used`;
  if (PROVIDER_SETTINGS.has(name)) {
    const role = ROLES.find((candidate) => name.startsWith(`${candidate}_`));
    if (role && name !== 'EMBEDDING_DIMENSIONS') {
      return roles[role] ? `the ${role.toLowerCase()} role` : `ignored: ${role}_MODEL is not set, the role stays on the devstack`;
    }
    const taken = ROLES.filter((candidate) => roles[candidate]).map((candidate) => candidate.toLowerCase());
    if (name === 'EMBEDDING_DIMENSIONS')
      return roles.EMBEDDING ? 'the embedding role and the local vector index' : 'ignored: EMBEDDING_MODEL is not set';
    return taken.length > 0 ? `the ${taken.join(', ')} role${taken.length > 1 ? 's' : ''}` : 'ignored: no ROLE_MODEL is set';
  }
  const workers = WORKERS.filter((worker) => name in settings.byWorker[worker.name]).map((worker) => worker.name);
  return `the ${workers.join(', ')} worker${workers.length > 1 ? 's' : ''}`;
}

/** .dev.vars.example's stand-ins for real values (`your-…`, `sk-...`): copied into .dev.vars by mistake. */
const looksLikePlaceholder = (value: string) => /your-|\.\.\.$/.test(value);

/** `npm run dev`'s account of the settings it took: each name, its value (a secret's hidden), its source and where it went. */
export function describeDevSettings(settings: DevSettings, roles: UserRoles): string[] {
  if (settings.given.size === 0) {
    return ['Settings: none from the shell or .dev.vars (either can set anything in .dev.vars.example; the shell wins)'];
  }
  const rows = [...settings.given].sort(([a], [b]) => a.localeCompare(b));
  const width = Math.max(...rows.map(([name]) => name.length));
  const shown = (name: string, value: string) => {
    if (isSecretSetting(name)) return '(secret, hidden)';
    return value.length > 48 ? `${value.slice(0, 47)}…` : value;
  };
  return [
    'Settings from the shell and .dev.vars (the shell wins; secrets hidden):',
    ...rows.map(
      ([name, { value, source }]) =>
        `  ${name.padEnd(width)}  ${shown(name, value).padEnd(48)}  ${source.padEnd(9)}  → ${destination(name, settings, roles)}` +
        (looksLikePlaceholder(value) ? " (still .dev.vars.example's placeholder?)" : ''),
    ),
  ];
}
