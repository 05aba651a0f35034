import type { CheckResult } from './check-result.ts';
import { errorLine, failureKind, type WranglerOutput } from './wrangler.ts';

/** What `wrangler hyperdrive get` prints after its banner: the config as the API returns it. */
interface HyperdriveConfig {
  id?: string;
  name?: string;
  caching?: { disabled?: boolean; max_age?: number; stale_while_revalidate?: number };
}

const TURN_OFF = (id: string) => `npx wrangler hyperdrive update ${id} --caching-disabled`;

/** The JSON object wrangler printed, its banner before it left out. */
export function parseHyperdriveConfig(stdout: string): HyperdriveConfig | undefined {
  const start = stdout.search(/^\{/m);
  if (start < 0) return undefined;
  try {
    return JSON.parse(stdout.slice(start)) as HyperdriveConfig;
  } catch {
    return undefined;
  }
}

/**
 * Hyperdrive caches read queries unless told not to (max_age 60 s by default). Access checks, job
 * polls and document lists are plain reads, so with caching a removed member keeps access and a job's
 * status lags for up to a minute. Caching is off only when the config says `disabled: true`; no
 * `caching` at all is the default, which caches.
 */
export function hyperdriveCachingVerdict(id: string, output: WranglerOutput): CheckResult {
  const subject = `Hyperdrive ${id}`;
  if (output.status !== 0) {
    const kind = failureKind(output);
    if (kind === 'not-found') {
      return {
        status: 'fail',
        subject,
        message: `no such config in the account wrangler is logged into (${errorLine(output)}); HYPERDRIVE_ID is the id \`wrangler hyperdrive create\` printed`,
      };
    }
    const why =
      kind === 'login'
        ? 'wrangler is not logged in (npx wrangler login, or set CLOUDFLARE_API_TOKEN)'
        : kind === 'network'
          ? 'the Cloudflare API could not be reached'
          : `wrangler failed: ${errorLine(output)}`;
    return {
      status: 'unchecked',
      subject,
      message: `its query caching was not checked: ${why}. Caching must be off (${TURN_OFF(id)})`,
    };
  }
  const config = parseHyperdriveConfig(output.stdout);
  if (!config) {
    return {
      status: 'unchecked',
      subject,
      message: `wrangler printed no config to read; make sure caching is off (${TURN_OFF(id)})`,
    };
  }
  const name = config.name ? ` (${config.name})` : '';
  if (config.caching?.disabled === true) {
    return { status: 'pass', subject: `${subject}${name}`, message: 'query caching is disabled' };
  }
  const maxAge = config.caching?.max_age ?? 60;
  return {
    status: 'fail',
    subject: `${subject}${name}`,
    message:
      `caches read queries for up to ${maxAge} s: a removed member would keep access and job status would lag that long. ` +
      `Turn it off: ${TURN_OFF(id)}`,
  };
}
