/**
 * Users of the devstack's Auth API over HTTP, the way a script makes them: sign up, sign in, grant
 * the admin flag. Free of vitest, so that the benchmarks make their users with it too.
 */

export interface AuthEndpoint {
  supabaseUrl: string;
  anonKey: string;
}

export interface Session {
  token: string;
  refreshToken: string;
}

const PASSWORD = 'correct horse battery';

async function session(response: Response, what: string): Promise<Session & { id: string }> {
  const body = (await response.json()) as { access_token?: string; refresh_token?: string; user?: { id?: string } };
  if (!response.ok || !body.access_token || !body.refresh_token || !body.user?.id)
    throw new Error(`${what} failed: ${response.status} ${JSON.stringify(body)}`);
  return { id: body.user.id, token: body.access_token, refreshToken: body.refresh_token };
}

export async function signUpUser(auth: AuthEndpoint, email: string): Promise<Session & { id: string; email: string }> {
  const response = await fetch(`${auth.supabaseUrl}/auth/v1/signup`, {
    method: 'POST',
    headers: { apikey: auth.anonKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  return { ...(await session(response, 'sign-up')), email };
}

/** A fresh session, e.g. for a token that carries claims granted since sign-up. */
export async function signIn(auth: AuthEndpoint, email: string): Promise<Session> {
  const response = await fetch(`${auth.supabaseUrl}/auth/v1/token?grant_type=password`, {
    method: 'POST',
    headers: { apikey: auth.anonKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  const { token, refreshToken } = await session(response, 'sign-in');
  return { token, refreshToken };
}

/** Sets app_metadata.is_admin through the admin API; tokens carry it from the next sign-in. */
export async function grantAdmin(auth: AuthEndpoint & { serviceRoleKey: string }, userId: string): Promise<void> {
  const update = await fetch(`${auth.supabaseUrl}/auth/v1/admin/users/${userId}`, {
    method: 'PUT',
    headers: {
      apikey: auth.serviceRoleKey,
      Authorization: `Bearer ${auth.serviceRoleKey}`,
      'Content-Type': 'application/json',
    },
    body: JSON.stringify({ app_metadata: { is_admin: true } }),
  });
  if (!update.ok) throw new Error(`admin update failed: ${update.status} ${await update.text()}`);
}
