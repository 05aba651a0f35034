import { randomUUID } from 'node:crypto';
import { importJWK, type JWTPayload, SignJWT } from 'jose';
import postgres from 'postgres';
import { inject } from 'vitest';
import { type CallOptions, callApi, type ErrorBody, type Method } from '../../devstack/harness/api-call.ts';
import { grantAdmin, signIn, signUpUser } from '../../devstack/harness/auth-client.ts';

export const stack = inject('stack');
export const skipRealPostgres = stack.engine === 'skipped';

export {
  type ApiResponse,
  type ErrorBody,
  fileForm,
  type Method,
  type Query,
  type ResponseBody,
  type Schema,
} from '../../devstack/harness/api-call.ts';

/** Calls the API worker over HTTP, as any client would; the body is typed by `method` and `path` (see api-call.ts). */
export function api<M extends Method, P extends string>(method: M, path: P, options: CallOptions = {}) {
  return callApi(stack.apiUrl, method, path, options);
}

/** A 422's `detail`: one `{loc, msg, type}` a failed field. Any other refusal's `detail` is a sentence, and fails here. */
export function problems(response: { body: Partial<ErrorBody> }): ValidationProblem[] {
  const { detail } = response.body;
  if (!Array.isArray(detail)) throw new Error(`not a validation failure: ${JSON.stringify(response.body)}`);
  return detail;
}

export type ValidationProblem = Exclude<ErrorBody['detail'], string>[number];

export interface TestUser {
  id: string;
  email: string;
  token: string;
  refreshToken: string;
}

/** Signs up through the devstack's GoTrue API, the way a script would. */
export async function signUp(prefix = 'user'): Promise<TestUser> {
  return signUpUser(stack, `${prefix}-${randomUUID().slice(0, 8)}@example.com`);
}

/** Sets app_metadata.is_admin through the admin API and signs in again for a token that carries it. */
export async function makeAdmin(user: TestUser): Promise<TestUser> {
  await grantAdmin(stack, user.id);
  return { ...user, ...(await signIn(stack, user.email)) };
}

/** Mints a token with the devstack's own key (or another), for the bad-token cases. */
export async function mintToken(
  claims: JWTPayload,
  options: {
    expiresIn?: string | number;
    kid?: string;
    key?: CryptoKey | Uint8Array;
    alg?: string;
    header?: Record<string, unknown>;
  } = {},
): Promise<string> {
  const key = options.key ?? (await importJWK(JSON.parse(stack.privateJwk), 'ES256'));
  const jwt = new SignJWT({ aud: 'authenticated', role: 'authenticated', iss: stack.issuer, ...claims })
    .setProtectedHeader({ alg: options.alg ?? 'ES256', kid: options.kid ?? 'test-key-1', typ: 'JWT', ...options.header })
    .setIssuedAt();
  if (options.expiresIn !== undefined) jwt.setExpirationTime(options.expiresIn);
  else jwt.setExpirationTime('1h');
  return jwt.sign(key);
}

let sqlClient: postgres.Sql | undefined;

/** Direct database access, to check what a request left behind. */
export function db(): postgres.Sql {
  sqlClient ??= postgres(stack.databaseUrl, { max: 2, prepare: false, onnotice: () => {} });
  return sqlClient;
}

/**
 * A fingerprint of every row that belongs to these users or their collections, to
 * prove that a refused request changed nothing. Scoped, because other test files
 * write to the same database at the same time.
 */
export async function snapshot(userIds: string[]): Promise<string> {
  const [row] = await db()<{ fingerprint: string }[]>`
    with cs as (
      select * from collections where user_id = any(${userIds}::uuid[])
    )
    select md5(concat_ws('|',
      (select string_agg(concat_ws(',', id, name, config::text), ';' order by id) from cs),
      (select string_agg(concat_ws(',', id, token_hash, permission, uses), ';' order by id)
         from collection_shares where collection_id in (select id from cs)),
      (select string_agg(concat_ws(',', collection_id, user_id, permission), ';' order by collection_id, user_id)
         from collection_members where collection_id in (select id from cs) or user_id = any(${userIds}::uuid[])),
      (select string_agg(concat_ws(',', id, collection_id, user_id, title, updated_at), ';' order by id)
         from chat_sessions where collection_id in (select id from cs) or user_id = any(${userIds}::uuid[])),
      (select string_agg(concat_ws(',', m.id, m.content), ';' order by m.id)
         from chat_messages m join chat_sessions s on s.id = m.session_id
        where s.collection_id in (select id from cs) or s.user_id = any(${userIds}::uuid[])),
      (select string_agg(concat_ws(',', id, collection_id, source), ';' order by id)
         from ingest_jobs where collection_id in (select id from cs) or user_id = any(${userIds}::uuid[])),
      (select string_agg(concat_ws(',', id, collection_id, name), ';' order by id)
         from documents where collection_id in (select id from cs) or user_id = any(${userIds}::uuid[]))
    )) as fingerprint`;
  return row?.fingerprint ?? '';
}
