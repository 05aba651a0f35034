import type { Context } from 'hono';
import type { AuthDeps } from './deps.ts';
import { badRequest, notFound, unprocessable } from './errors.ts';
import { requireAdmin } from './gateway.ts';
import { hashPassword } from './passwords.ts';
import { endSessions } from './sessions.ts';
import {
  AUDIENCE,
  deleteUser,
  emailProviderMetadata,
  findUserByEmail,
  findUserById,
  insertUser,
  isUniqueViolation,
  listUsers,
  mergeMetadata,
  saveUser,
  type UserRow,
  userJson,
} from './users.ts';
import { AdminDeleteBody, AdminUserBody, checkPasswordStrength, readBody, UUID_PATTERN, validateEmail } from './validation.ts';

const emailExists = () => unprocessable('email_exists', 'A user with this email address has already been registered');
// The devstack's auth.users has no phone column, so phone users cannot be stored.
const noPhones = () => badRequest('validation_failed', 'Phone users are not supported by the devstack auth server');

// The check before a write can lose a race: the unique index on email has the last word.
async function claimingEmail(write: () => Promise<UserRow>): Promise<UserRow> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw emailExists();
    throw error;
  }
}

async function loadUser(c: Context, deps: AuthDeps): Promise<UserRow> {
  const id = c.req.param('id') ?? '';
  if (!UUID_PATTERN.test(id)) throw notFound('validation_failed', 'user_id must be an UUID');
  const user = await findUserById(deps.sql, id);
  if (!user) throw notFound('user_not_found', 'User not found');
  return user;
}

const DEFAULT_PER_PAGE = 50;
const MAX_PER_PAGE = 1000;

function pageParam(value: string | undefined, fallback: number): number {
  if (!value) return fallback;
  if (!/^\d+$/.test(value)) throw badRequest('validation_failed', `Bad Pagination Parameters: invalid number "${value}"`);
  return Number(value);
}

/** GET /admin/users?page=&per_page=&filter= with GoTrue's Link and X-Total-Count headers. */
export async function adminListUsers(c: Context, deps: AuthDeps): Promise<Response> {
  await requireAdmin(c, deps);
  const page = Math.max(1, pageParam(c.req.query('page'), 1));
  const perPage = Math.min(MAX_PER_PAGE, Math.max(1, pageParam(c.req.query('per_page'), DEFAULT_PER_PAGE)));
  const { users, total } = await listUsers(deps.sql, page, perPage, c.req.query('filter') ?? '');

  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const link = (p: number) => `</admin/users?page=${p}&per_page=${perPage}>`;
  const links = page < lastPage ? [`${link(page + 1)}; rel="next"`] : [];
  links.push(`${link(lastPage)}; rel="last"`);
  c.header('Link', links.join(', '));
  c.header('X-Total-Count', String(total));
  return c.json({ users: users.map(userJson), aud: AUDIENCE });
}

/** POST /admin/users: unlike signup, the email stays unconfirmed unless email_confirm is set. */
export async function adminCreateUser(c: Context, deps: AuthDeps): Promise<Response> {
  await requireAdmin(c, deps);
  const body = await readBody(c, AdminUserBody);
  if (!body.email && !body.phone) {
    throw badRequest('validation_failed', 'Cannot create a user without either an email or phone');
  }
  if (body.phone) throw noPhones();
  const email = validateEmail(body.email);
  if (await findUserByEmail(deps.sql, email)) throw emailExists();

  const id = body.id ?? crypto.randomUUID();
  if (!UUID_PATTERN.test(id)) throw badRequest('validation_failed', 'ID must conform to the uuid v4 format');
  if (/^[0-]+$/.test(id)) throw badRequest('validation_failed', 'ID cannot be a nil uuid');
  if (body.password && new TextEncoder().encode(body.password).length > 72) {
    throw badRequest('validation_failed', 'bcrypt: password length exceeds 72 bytes');
  }
  // Without a password the user simply cannot sign in with one, as with GoTrue's random password.
  const encryptedPassword = body.password ? await hashPassword(body.password) : '';
  const confirmed = body.email_confirm === true;
  const userMetadata = body.user_metadata ?? {};

  const user = await claimingEmail(() =>
    insertUser(deps.sql, {
      id,
      email,
      role: body.role || 'authenticated',
      encryptedPassword,
      confirmed,
      appMetadata: mergeMetadata(emailProviderMetadata(), body.app_metadata ?? {}),
      userMetadata: confirmed ? { ...userMetadata, email_verified: true } : userMetadata,
    }),
  );
  return c.json(userJson(user));
}

/** GET /admin/users/:id */
export async function adminGetUser(c: Context, deps: AuthDeps): Promise<Response> {
  await requireAdmin(c, deps);
  return c.json(userJson(await loadUser(c, deps)));
}

/**
 * PUT /admin/users/:id. Metadata objects are merged key by key into what is stored
 * (null removes a key); a new password signs the user out everywhere.
 */
export async function adminUpdateUser(c: Context, deps: AuthDeps): Promise<Response> {
  await requireAdmin(c, deps);
  const { id } = await loadUser(c, deps);
  const body = await readBody(c, AdminUserBody);
  if (body.phone) throw noPhones();
  const email = body.email ? validateEmail(body.email) : undefined;
  if (typeof body.password === 'string') checkPasswordStrength(body.password);
  const encryptedPassword = body.password ? await hashPassword(body.password) : undefined;

  const user = await claimingEmail(() =>
    deps.sql.begin(async (tx) => {
      const user = await findUserById(tx, id, true);
      if (!user) throw notFound('user_not_found', 'User not found');
      if (body.role) user.role = body.role;
      if (body.email_confirm) {
        user.email_confirmed_at = new Date();
        user.raw_user_meta_data = { ...user.raw_user_meta_data, email_verified: true };
      }
      if (encryptedPassword) {
        user.encrypted_password = encryptedPassword;
        await endSessions(tx, user.id, undefined, 'global');
      }
      if (email && email !== user.email) {
        const holder = await findUserByEmail(tx, email);
        if (holder && holder.id !== user.id) throw emailExists();
        user.email = email;
      }
      if (body.app_metadata) user.raw_app_meta_data = mergeMetadata(user.raw_app_meta_data, body.app_metadata);
      if (body.user_metadata) user.raw_user_meta_data = mergeMetadata(user.raw_user_meta_data, body.user_metadata);
      return saveUser(tx, user);
    }),
  );
  return c.json(userJson(user));
}

/** DELETE /admin/users/:id. There is no soft delete here: the row and its sessions go. */
export async function adminDeleteUser(c: Context, deps: AuthDeps): Promise<Response> {
  await requireAdmin(c, deps);
  const { id } = await loadUser(c, deps);
  if ((await c.req.text()).trim()) await readBody(c, AdminDeleteBody);
  await deleteUser(deps.sql, id);
  return c.json({});
}
