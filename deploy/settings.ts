import { type DeployedWorker, settingNames } from './workers.ts';

/** Deploy-time settings: read by this script, never uploaded to a worker. */
export const DEPLOY_SETTINGS = ['HYPERDRIVE_ID'] as const;

/** KEY=VALUE lines, `#` comments and blank lines; quotes around a value are removed. */
export function parseEnvFile(text: string): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const [number, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) throw new Error(`line ${number + 1} is not KEY=VALUE`);
    const [, key, value = ''] = match;
    settings[key as string] = value.replace(/^(['"])(.*)\1$/, '$2');
  }
  return settings;
}

/** What one worker is given: the settings it reads, blank ones left out (so the default applies). */
export function settingsFor(worker: DeployedWorker, all: Record<string, string>): Record<string, string> {
  return Object.fromEntries(settingNames(worker).flatMap((name) => (all[name] ? [[name, all[name]]] : [])));
}

/**
 * Keys, tokens and signing keys: uploaded as Worker secrets (write-only, never shown again) and never
 * printed. Everything else (URLs, model names, limits) goes up as a plain variable, readable in the
 * dashboard. SUPABASE_ANON_KEY is public by design, but a key all the same.
 */
export const isSecretSetting = (name: string) => /(_KEY|_TOKEN|_SECRET|_PASSWORD)$/.test(name);

/** One worker's settings split into what is uploaded as secrets and what as plain variables. */
export function splitSettings(worker: DeployedWorker, all: Record<string, string>) {
  const secrets: Record<string, string> = {};
  const vars: Record<string, string> = {};
  for (const [name, value] of Object.entries(settingsFor(worker, all))) {
    (isSecretSetting(name) ? secrets : vars)[name] = value;
  }
  return { secrets, vars };
}

/**
 * Every problem a worker would report at its first request, found before anything is deployed:
 * its own schema's verdict on exactly what it will be given, and the settings a complete
 * deployment needs. Each problem names the setting, never its value.
 */
export function problemsOf(worker: DeployedWorker, all: Record<string, string>): string[] {
  const given = settingsFor(worker, all);
  const parsed = worker.schema.safeParse({ ...given, HYPERDRIVE: { connectionString: 'postgres://checked-by-hyperdrive' } });
  const problems = parsed.success ? [] : parsed.error.issues.map((issue) => `${String(issue.path[0])}: ${issue.message}`);
  for (const name of worker.complete) {
    if (!given[name]) problems.push(`${name}: required for a complete deployment`);
  }
  return problems;
}

/** Names in the file that no worker reads: most likely a typo. */
export function unknownSettings(workers: DeployedWorker[], all: Record<string, string>): string[] {
  const known = new Set<string>([...DEPLOY_SETTINGS, ...workers.flatMap(settingNames)]);
  return Object.keys(all).filter((name) => !known.has(name));
}

/** The wrangler config to deploy: the committed one, with the Hyperdrive id put in. */
export function withHyperdriveId(toml: string, id: string): string {
  const placeholder = /^(id\s*=\s*)"0{32}"/m;
  if (!placeholder.test(toml)) throw new Error('the [[hyperdrive]] id placeholder is missing from the wrangler config');
  return toml.replace(placeholder, `$1"${id}"`);
}

/** README's table of which setting goes on which worker, made from the workers' own validation. */
export function settingsTable(workers: DeployedWorker[]): string {
  const names = [...new Set(workers.flatMap(settingNames))].sort();
  const cell = (worker: DeployedWorker, name: string) => {
    if (!settingNames(worker).includes(name)) return '';
    const shape = worker.schema.shape[name] as { safeParse(value: unknown): { success: boolean } };
    return !shape.safeParse(undefined).success || worker.complete.includes(name) ? 'required' : 'optional';
  };
  const rows = names.map((name) => `| \`${name}\` | ${workers.map((worker) => cell(worker, name)).join(' | ')} |`);
  return [
    `| setting | ${workers.map((w) => w.name).join(' | ')} |`,
    `| --- |${workers.map(() => ' :-: |').join('')}`,
    ...rows,
  ].join('\n');
}
