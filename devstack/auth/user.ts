import type { Context } from 'hono';
import type { AuthDeps } from './deps.ts';
import { badRequest } from './errors.ts';
import { requireUser } from './gateway.ts';
import { endSessions, type LogoutScope } from './sessions.ts';
import { userJson } from './users.ts';

/** GET /user: the caller's own user object. */
export async function getUser(c: Context, deps: AuthDeps): Promise<Response> {
  const { user } = await requireUser(c, deps);
  return c.json(userJson(user));
}

const SCOPES: Record<string, LogoutScope> = { '': 'global', global: 'global', local: 'local', others: 'others' };

/** POST /logout?scope=global|local|others, global by default as in GoTrue and auth-js. */
export async function logout(c: Context, deps: AuthDeps): Promise<Response> {
  const requested = c.req.query('scope') ?? '';
  const scope = SCOPES[requested];
  if (!scope) throw badRequest('validation_failed', `Unsupported logout scope "${requested}"`);
  const { user, session } = await requireUser(c, deps);
  await endSessions(deps.sql, user.id, session?.id, scope);
  return c.body(null, 204);
}
