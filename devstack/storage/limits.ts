import { entityTooLarge, invalidFileSizeLimit, invalidMimeType, invalidRequest } from './errors.ts';

const SIZE_WITH_UNIT = /^([0-9]+(?:\.[0-9]+)?)(gb|mb|kb|b)$/i;
const UNIT_BYTES: Record<string, number> = { GB: 1e9, MB: 1e6, KB: 1e3, B: 1 };

/**
 * A bucket's file_size_limit: bytes, or a string such as "20MB" in Storage's decimal
 * units (binary units like "50MiB" are a Supabase CLI convenience the API rejects).
 * Above the global limit is refused, as Storage does.
 */
export function parseFileSizeLimit(value: unknown, globalLimit: number): number | null | undefined {
  if (value === undefined || value === null) return value;
  let bytes: number;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0) throw invalidRequest('body/file_size_limit must be a non-negative integer');
    bytes = value;
  } else if (typeof value === 'string') {
    const match = SIZE_WITH_UNIT.exec(value);
    if (!match?.[1] || !match[2]) throw invalidFileSizeLimit();
    bytes = Number(Number.parseFloat(match[1]).toPrecision(3)) * (UNIT_BYTES[match[2].toUpperCase()] ?? 1);
  } else {
    throw invalidRequest('body/file_size_limit must be integer or string');
  }
  if (bytes > globalLimit) throw entityTooLarge();
  return bytes;
}

const MIME_PATTERN = /^([a-zA-Z0-9\-+.]+)\/([a-zA-Z0-9\-+.]+)(;\s*charset=[a-zA-Z0-9-]+)?$|\*$/;

export function parseAllowedMimeTypes(value: unknown): string[] | null | undefined {
  if (value === undefined || value === null) return value;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    throw invalidRequest('body/allowed_mime_types must be array of strings');
  }
  const types = (value as string[]).filter((type) => type);
  for (const type of types) {
    if (type.length > 1000 || !MIME_PATTERN.test(type)) throw invalidMimeType(type);
  }
  return types;
}

/**
 * Storage compares type and subtype literally, parameters included, so
 * "text/plain;charset=UTF-8" passes only if listed as such (or as "text/*").
 */
export function assertMimeTypeAllowed(mimeType: string, allowed: string[] | null): void {
  if (!allowed || allowed.length === 0) return;
  const [type, subtype] = mimeType.split('/');
  if (!type || subtype === undefined) throw invalidMimeType(mimeType);
  for (const entry of allowed) {
    const [allowedType, allowedSubtype] = entry.split('/');
    if (allowedType === type && (allowedSubtype === '*' || allowedSubtype === subtype)) return;
  }
  throw invalidMimeType(mimeType);
}
