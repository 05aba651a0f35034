import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';

/** The model roles the workers read settings for: ROLE_MODEL, ROLE_BASE_URL, ROLE_API_KEY. */
export const ROLES = ['CHAT', 'EMBEDDING', 'VISION', 'JUDGE', 'RERANK'] as const;
export type Role = (typeof ROLES)[number];

/** A role served by a provider the user named rather than by the devstack's stand-in. */
export interface UserRole {
  model: string;
  baseUrl: string;
  apiKey: string;
  /** EMBEDDING only: the vector index must be made with it. */
  dimensions?: number;
}

export type UserRoles = Partial<Record<Role, UserRole>>;

const OPENAI = 'https://api.openai.com/v1';
const COHERE = 'https://api.cohere.com/v2';

/** The shell's settings over `.dev.vars`'s, as wrangler itself would read them. */
export function readUserSettings(root: string, env: NodeJS.ProcessEnv = process.env): Record<string, string | undefined> {
  const file = `${root}/.dev.vars`;
  const fromFile = existsSync(file) ? parseEnv(readFileSync(file, 'utf8')) : {};
  return { ...fromFile, ...env };
}

/**
 * The roles the user configured: a role counts when its model is set. Its endpoint is its own, else
 * OPENAI_BASE_URL and OPENAI_API_KEY, else OpenAI itself. A role with no key anywhere is refused by name.
 */
export function userRoles(settings: Record<string, string | undefined>): UserRoles {
  const roles: UserRoles = {};
  for (const role of ROLES) {
    const model = settings[`${role}_MODEL`]?.trim();
    if (!model) continue;
    const apiKey = settings[`${role}_API_KEY`] || settings.OPENAI_API_KEY;
    if (!apiKey) throw new Error(`${role}_MODEL is set, but neither ${role}_API_KEY nor OPENAI_API_KEY is`);
    const dimensions = role === 'EMBEDDING' ? Number(settings.EMBEDDING_DIMENSIONS) : undefined;
    if (role === 'EMBEDDING' && !(Number.isInteger(dimensions) && (dimensions as number) > 0)) {
      throw new Error('EMBEDDING_MODEL is set: set EMBEDDING_DIMENSIONS too, so the local vector index can be made to match');
    }
    roles[role] = {
      model,
      // The reranker speaks Cohere's API, which OpenAI does not serve.
      baseUrl: settings[`${role}_BASE_URL`] || settings.OPENAI_BASE_URL || (role === 'RERANK' ? COHERE : OPENAI),
      apiKey,
      ...(dimensions ? { dimensions } : {}),
    };
  }
  return roles;
}

/** The workers' settings for the user's roles; every other role keeps the devstack's. */
export function roleVars(roles: UserRoles): Record<string, string> {
  return Object.fromEntries(
    Object.entries(roles).flatMap(([role, r]) => [
      [`${role}_MODEL`, r.model],
      [`${role}_BASE_URL`, r.baseUrl],
      [`${role}_API_KEY`, r.apiKey],
      ...(r.dimensions ? [['EMBEDDING_DIMENSIONS', String(r.dimensions)]] : []),
    ]),
  );
}
