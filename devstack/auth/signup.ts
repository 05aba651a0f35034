import type { Context } from 'hono';
import type { AuthDeps } from './deps.ts';
import { badRequest, unprocessable } from './errors.ts';
import { hashPassword } from './passwords.ts';
import { sessionResponse } from './session-response.ts';
import { createSession } from './sessions.ts';
import { emailProviderMetadata, findUserByEmail, insertUser, isUniqueViolation, touchLastSignIn } from './users.ts';
import { checkPasswordStrength, readBody, SignupBody, validateEmail } from './validation.ts';

const userExists = () => unprocessable('user_already_exists', 'User already registered');

/**
 * POST /signup with email confirmation switched off (GoTrue's MAILER_AUTOCONFIRM):
 * the user is confirmed on the spot and signed in.
 */
export async function signup(c: Context, deps: AuthDeps): Promise<Response> {
  const body = await readBody(c, SignupBody);
  if (!body.email && !body.phone) {
    throw unprocessable('anonymous_provider_disabled', 'Anonymous sign-ins are disabled');
  }
  if (!body.password) throw badRequest('validation_failed', 'Signup requires a valid password');
  checkPasswordStrength(body.password);
  if (body.email && body.phone) {
    throw badRequest('validation_failed', 'Only an email address or phone number should be provided on signup.');
  }
  if (body.phone) throw badRequest('phone_provider_disabled', 'Phone signups are disabled');
  const email = validateEmail(body.email);

  if (await findUserByEmail(deps.sql, email)) throw userExists();
  // Hashing takes a while, so it happens before the transaction opens.
  const encryptedPassword = await hashPassword(body.password);

  try {
    const { user, session, refreshToken } = await deps.sql.begin(async (tx) => {
      const created = await insertUser(tx, {
        id: crypto.randomUUID(),
        email,
        role: 'authenticated',
        encryptedPassword,
        confirmed: true,
        appMetadata: emailProviderMetadata(),
        // Confirming an email records it in user_metadata as well.
        userMetadata: { ...body.data, email_verified: true },
      });
      const started = await createSession(tx, created.id);
      return { user: await touchLastSignIn(tx, created.id), ...started };
    });
    return c.json(await sessionResponse(deps, user, session, refreshToken));
  } catch (error) {
    // A concurrent signup with the same address won the race to the unique index.
    if (isUniqueViolation(error)) throw userExists();
    throw error;
  }
}
