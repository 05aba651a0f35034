import type { Sql } from 'postgres';
import type { TokenSigner } from './tokens.ts';

/** What every handler needs, built once by createAuthServer from its options. */
export interface AuthDeps {
  sql: Sql;
  signer: TokenSigner;
  issuer: string;
  jwtExpirySeconds: number;
  anonKey: string;
  serviceRoleKey: string;
  refreshTokenReuseIntervalSeconds: number;
}
