import type { AuthDeps } from './deps.ts';
import type { SessionRow } from './sessions.ts';
import { accessTokenClaims } from './tokens.ts';
import { type UserRow, userJson } from './users.ts';

/** GoTrue's AccessTokenResponse, which auth-js stores as its Session. */
export async function sessionResponse(
  deps: AuthDeps,
  user: UserRow,
  session: SessionRow,
  refreshToken: string,
): Promise<Record<string, unknown>> {
  const issuedAt = Math.floor(Date.now() / 1000);
  const claims = accessTokenClaims(
    user,
    { id: session.id, createdAt: session.created_at },
    deps.issuer,
    issuedAt,
    deps.jwtExpirySeconds,
  );
  return {
    access_token: await deps.signer.sign(claims),
    token_type: 'bearer',
    expires_in: deps.jwtExpirySeconds,
    expires_at: issuedAt + deps.jwtExpirySeconds,
    refresh_token: refreshToken,
    user: userJson(user),
  };
}
