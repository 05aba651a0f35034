import type { Context } from 'hono';
import { z } from 'zod';
import { type AuthError, badRequest, weakPassword } from './errors.ts';

export const MIN_PASSWORD_LENGTH = 6;
// bcrypt ignores bytes past the 72nd, so GoTrue refuses longer passwords outright.
const MAX_PASSWORD_LENGTH = 72;

/**
 * GoTrue decodes bodies into Go structs: unknown fields are ignored and null
 * means "not given". Any other mismatch is a 400 bad_json.
 */
export async function readBody<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  const text = await c.req.text();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw badJson(error instanceof Error ? error.message : 'invalid JSON');
  }
  // Go decodes a JSON null into an untouched struct, i.e. "no fields given".
  const parsed = schema.safeParse(value === null ? {} : value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
    throw badJson(`${issue?.message ?? 'unexpected shape'}${where}`);
  }
  return parsed.data;
}

function badJson(detail: string): AuthError {
  return badRequest('bad_json', `Could not parse request body as JSON: ${detail}`);
}

const optionalString = z.string().nullish();
export const metadata = z.record(z.string(), z.unknown()).nullish();

export const SignupBody = z.object({
  email: optionalString,
  phone: optionalString,
  password: optionalString,
  data: metadata,
});

export const PasswordGrantBody = z.object({
  email: optionalString,
  phone: optionalString,
  password: optionalString,
});

export const RefreshGrantBody = z.object({ refresh_token: optionalString });

export const AdminUserBody = z.object({
  id: optionalString,
  email: optionalString,
  phone: optionalString,
  password: optionalString,
  role: optionalString,
  email_confirm: z.boolean().nullish(),
  app_metadata: metadata,
  user_metadata: metadata,
});

export const AdminDeleteBody = z.object({ should_soft_delete: z.boolean().nullish() });

// The pattern of github.com/badoux/checkmail, which GoTrue validates with.
const EMAIL_PATTERN =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** Returns the address lower-cased, which is how GoTrue stores it. */
export function validateEmail(email: string | null | undefined): string {
  if (!email) throw badRequest('validation_failed', 'An email address is required');
  if (email.length > 255) throw badRequest('validation_failed', 'An email address is too long');
  if (!EMAIL_PATTERN.test(email)) throw badRequest('validation_failed', 'Unable to validate email address: invalid format');
  return email.toLowerCase();
}

/** Go's len(): GoTrue counts bytes, not characters. */
const byteLength = (s: string) => new TextEncoder().encode(s).length;

export function checkPasswordStrength(password: string): void {
  if (byteLength(password) > MAX_PASSWORD_LENGTH) {
    throw badRequest('validation_failed', `Password cannot be longer than ${MAX_PASSWORD_LENGTH} characters`);
  }
  if (byteLength(password) < MIN_PASSWORD_LENGTH) {
    throw weakPassword(`Password should be at least ${MIN_PASSWORD_LENGTH} characters.`, ['length']);
  }
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
