import { createHash } from 'node:crypto';
import type { Reply } from './replies.ts';

/**
 * Upstash's own script flag: it locks only the script's KEYS instead of the whole database.
 * @upstash/ratelimit starts every script with `#!lua flags=allow-key-locking`, and Redis
 * refuses such a script outright ("Unexpected flag in script shebang").
 */
const UPSTASH_ONLY_FLAG = 'allow-key-locking';

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/** A command as it goes to Redis, and what its reply must become for the client. */
export interface Rewritten {
  args: string[];
  reply?: (reply: Reply) => Reply;
}

/**
 * Lets Redis run scripts written for Upstash. The flag is dropped before Redis sees the
 * script, and the client keeps Upstash's script ids: the SHA1 of the script as it was sent,
 * which is what @upstash/ratelimit hard-codes for its EVALSHA. Those ids are mapped to the
 * rewritten script's, so EVALSHA finds a script the front has rewritten, and NOSCRIPT comes
 * back exactly when Upstash would send it (nothing loaded yet, or the script cache emptied).
 */
export class ScriptIds {
  /** The client's id of a rewritten script → Redis's id for it. Scripts are few: nothing is evicted. */
  private readonly redisIds = new Map<string, string>();

  rewrite(args: string[]): Rewritten {
    const [command = '', first, ...rest] = args;
    const name = command.toUpperCase();
    if (first === undefined) return { args };
    if (name === 'EVAL' || name === 'EVAL_RO') return { args: [command, this.load(first), ...rest] };
    if (name === 'EVALSHA' || name === 'EVALSHA_RO') return { args: [command, this.redisId(first), ...rest] };
    const [sent, ...more] = rest;
    if (name !== 'SCRIPT' || sent === undefined) return { args };
    const sub = first.toUpperCase();
    if (sub === 'EXISTS') return { args: [command, first, ...rest.map((id) => this.redisId(id))] };
    if (sub !== 'LOAD') return { args };
    const script = this.load(sent);
    if (script === sent) return { args };
    // Redis answers with the rewritten script's id; the client must get the one it can compute.
    return { args: [command, first, script, ...more], reply: () => Buffer.from(sha1(sent)) };
  }

  /** The script Redis can run, remembering the id the client knows it by. */
  private load(script: string): string {
    const runnable = withoutUpstashFlag(script);
    if (runnable !== script) this.redisIds.set(sha1(script), sha1(runnable));
    return runnable;
  }

  private redisId(id: string): string {
    return this.redisIds.get(id.toLowerCase()) ?? id;
  }
}

/**
 * The script with `allow-key-locking` taken out of its shebang. With no flag left, the
 * shebang goes too (a blank line keeps line numbers in errors), so that Redis 6, which knows
 * no shebang, runs it as well.
 */
export function withoutUpstashFlag(script: string): string {
  const shebang = /^#!lua([^\r\n]*)/.exec(script);
  if (!shebang) return script;
  let dropped = false;
  const kept = (shebang[1] ?? '')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .flatMap((word) => {
      if (!word.startsWith('flags=')) return [word];
      const flags = word.slice('flags='.length).split(',');
      const others = flags.filter((flag) => flag !== UPSTASH_ONLY_FLAG);
      dropped ||= others.length < flags.length;
      return others.length > 0 ? [`flags=${others.join(',')}`] : [];
    });
  if (!dropped) return script;
  return (kept.length > 0 ? `#!lua ${kept.join(' ')}` : '') + script.slice(shebang[0].length);
}
