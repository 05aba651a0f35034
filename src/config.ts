import { z } from 'zod';
import { AppError } from './errors.ts';

const optionalUrl = z.preprocess((v) => (v === '' ? undefined : v), z.url().optional());

/** Every setting the API worker reads. .dev.vars.example documents each one. */
const ConfigSchema = z.object({
  HYPERDRIVE: z.object({ connectionString: z.string().min(1) }, 'the Hyperdrive binding HYPERDRIVE is missing'),
  AUTH_JWKS_URL: z.url('AUTH_JWKS_URL must be the URL of the identity provider JWKS'),
  AUTH_ISSUER: optionalUrl,
  AUTH_CLOCK_TOLERANCE_SECONDS: z.coerce.number().int().min(0).max(300).default(5),
});
export type Config = z.infer<typeof ConfigSchema>;

const cache = new WeakMap<object, Config>();

/**
 * Parsed once per env object. A missing or bad setting becomes a 500 whose detail
 * names the setting (never its value), and a log line for the operator.
 */
export function loadConfig(env: object): Config {
  const cached = cache.get(env);
  if (cached) return cached;
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const names = [...new Set(parsed.error.issues.map((issue) => String(issue.path[0] ?? '?')))];
    console.error(`Invalid configuration: ${parsed.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`).join('; ')}`);
    throw new AppError('misconfigured', `Service misconfigured: check setting ${names.join(', ')}`);
  }
  cache.set(env, parsed.data);
  return parsed.data;
}
