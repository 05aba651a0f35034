import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckResult } from './check-result.ts';
import { errorLine, failureKind, type Wrangler, type WranglerOutput } from './wrangler.ts';

/**
 * The secrets a Worker holds now, from `wrangler secret list` (JSON by default, no banner). A Worker not
 * deployed yet holds none. Undefined with a reason when wrangler could not tell.
 */
export function parseSecretList(output: WranglerOutput): { names: string[] } | { unknown: string } {
  if (output.status !== 0) {
    const kind = failureKind(output);
    if (kind === 'not-found') return { names: [] };
    return {
      unknown:
        kind === 'login'
          ? 'wrangler is not logged in (npx wrangler login, or set CLOUDFLARE_API_TOKEN)'
          : kind === 'network'
            ? 'the Cloudflare API could not be reached'
            : `wrangler failed: ${errorLine(output)}`,
    };
  }
  try {
    const list = JSON.parse(output.stdout) as { name: string }[];
    return { names: list.map((secret) => secret.name).sort() };
  } catch {
    return { unknown: 'wrangler printed no list to read' };
  }
}

/**
 * `wrangler deploy --secrets-file` keeps every secret a Worker already has, so a setting taken out of
 * the file would stay. What the deploy removes, in two steps: names now sent as plain variables go
 * before the upload (a variable and a secret may not share a name), the rest after it succeeds, so a
 * failed upload leaves the Worker's secrets as they were.
 */
export function staleSecrets(held: string[], upload: { secrets: Record<string, string>; vars: Record<string, string> }) {
  const stale = held.filter((name) => !(name in upload.secrets));
  return {
    beforeUpload: stale.filter((name) => name in upload.vars),
    afterUpload: stale.filter((name) => !(name in upload.vars)),
  };
}

/**
 * Deletes a Worker's secrets in one request: `wrangler secret bulk` with each name set to null asks no
 * question per name (`wrangler secret delete` would) and makes one new version, not one per secret.
 * The file names no value, only what goes.
 */
export async function removeSecrets(wrangler: Wrangler, config: string, names: string[], dir: string): Promise<boolean> {
  if (names.length === 0) return true;
  const file = join(dir, 'secrets-removed.json');
  writeFileSync(file, JSON.stringify(Object.fromEntries(names.map((name) => [name, null]))));
  const { status } = await wrangler.run(['secret', 'bulk', file, '--config', config]);
  return status === 0;
}

/** What `--check` says about one worker's secrets. */
export function secretsCheck(
  worker: string,
  listed: ReturnType<typeof parseSecretList>,
  upload: { secrets: Record<string, string>; vars: Record<string, string> },
): CheckResult {
  const subject = `${worker} worker secrets`;
  const plan = `${Object.keys(upload.secrets).length} secrets and ${Object.keys(upload.vars).length} plain variables to upload`;
  if ('unknown' in listed) {
    return {
      status: 'unchecked',
      subject,
      message: `${plan}; the secrets it holds now could not be listed (${listed.unknown}), so which the deploy would remove is not known`,
    };
  }
  const { beforeUpload, afterUpload } = staleSecrets(listed.names, upload);
  const removed = [...beforeUpload, ...afterUpload];
  return {
    status: 'pass',
    subject,
    message:
      removed.length === 0
        ? `${plan}; none of its secrets would be removed`
        : `${plan}; the deploy removes ${removed.join(', ')} (${beforeUpload.length > 0 ? `${beforeUpload.join(', ')} now plain variables; ` : ''}the rest no longer in the settings file)`,
  };
}
