import type { Context } from 'hono';
import type { AuthDeps } from './deps.ts';
import { type AuthError, badRequest, OAuthError, unprocessable } from './errors.ts';
import { passwordMatches } from './passwords.ts';
import { sessionResponse } from './session-response.ts';
import {
  createSession,
  findActiveRefreshToken,
  findRefreshTokenForUpdate,
  findSession,
  revokeSessionTokens,
  rotateRefreshToken,
  type SessionRow,
} from './sessions.ts';
import { findUserByEmail, findUserById, touchLastSignIn, type UserRow } from './users.ts';
import { MIN_PASSWORD_LENGTH, PasswordGrantBody, RefreshGrantBody, readBody } from './validation.ts';

/** POST /token?grant_type=... */
export async function token(c: Context, deps: AuthDeps): Promise<Response> {
  switch (c.req.query('grant_type')) {
    case 'password':
      return passwordGrant(c, deps);
    case 'refresh_token':
      return refreshTokenGrant(c, deps);
    default:
      // GoTrue really answers an unknown grant with this code and message.
      throw badRequest('invalid_credentials', 'unsupported_grant_type');
  }
}

const invalidCredentials = () => badRequest('invalid_credentials', 'Invalid login credentials');

async function passwordGrant(c: Context, deps: AuthDeps): Promise<Response> {
  const body = await readBody(c, PasswordGrantBody);
  if (body.email && body.phone) {
    throw badRequest('validation_failed', 'Only an email address or phone number should be provided on login.');
  }
  if (body.phone) throw unprocessable('phone_provider_disabled', 'Phone logins are disabled');
  if (!body.email) throw badRequest('validation_failed', 'missing email or phone');

  const password = body.password ?? '';
  const found = await findUserByEmail(deps.sql, body.email);
  if (!found?.encrypted_password) throw invalidCredentials();
  if (!(await passwordMatches(password, found.encrypted_password))) throw invalidCredentials();
  if (!found.email_confirmed_at) throw badRequest('email_not_confirmed', 'Email not confirmed');

  const { user, session, refreshToken } = await deps.sql.begin(async (tx) => {
    const started = await createSession(tx, found.id);
    return { user: await touchLastSignIn(tx, found.id), ...started };
  });
  const response = await sessionResponse(deps, user, session, refreshToken);
  // A password set before the current rules still signs in, with a nudge attached.
  if (new TextEncoder().encode(password).length < MIN_PASSWORD_LENGTH) {
    response.weak_password = {
      message: `Password should be at least ${MIN_PASSWORD_LENGTH} characters.`,
      reasons: ['length'],
    };
  }
  return c.json(response);
}

type RefreshOutcome = { user: UserRow; session: SessionRow; refreshToken: string } | { failure: AuthError };

/**
 * Rotates the refresh token like GoTrue: the presented token is revoked and a child
 * issued. Presenting the parent of the session's current token again returns the
 * current one (a client that lost the previous response); any other revoked token
 * is accepted only within the reuse interval, after which the session's whole token
 * family is revoked as a precaution against theft.
 */
async function refreshTokenGrant(c: Context, deps: AuthDeps): Promise<Response> {
  const body = await readBody(c, RefreshGrantBody);
  const presented = body.refresh_token;
  if (!presented) throw new OAuthError('invalid_request', 'refresh_token required');

  const outcome = await deps.sql.begin(async (tx): Promise<RefreshOutcome> => {
    const token = await findRefreshTokenForUpdate(tx, presented);
    const user = token && (await findUserById(tx, token.user_id));
    if (!token || !user) throw badRequest('refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found');
    const session = token.session_id ? await findSession(tx, token.session_id) : undefined;
    if (!session) throw badRequest('session_not_found', 'Invalid Refresh Token: No Valid Session Found');

    let issued: string | undefined;
    if (token.revoked) {
      const active = await findActiveRefreshToken(tx, session.id);
      if (active && active.parent === token.token) {
        issued = active.token;
      } else if (Date.now() > token.updated_at.getTime() + deps.refreshTokenReuseIntervalSeconds * 1000) {
        await revokeSessionTokens(tx, session.id);
        // Returned rather than thrown so that the revocation above is committed.
        return { failure: badRequest('refresh_token_already_used', 'Invalid Refresh Token: Already Used') };
      }
    }
    issued ??= await rotateRefreshToken(tx, token, session.id);
    return { user, session, refreshToken: issued };
  });

  if ('failure' in outcome) throw outcome.failure;
  return c.json(await sessionResponse(deps, outcome.user, outcome.session, outcome.refreshToken));
}
