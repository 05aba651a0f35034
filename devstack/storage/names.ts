import { invalidBucketName, invalidKey } from './errors.ts';

// Storage's S3-safe set for bucket names; names are also bounded like its buckets_name_length_check.
const BUCKET_NAME = /^[\w!\-.*'() &$@=;:+,?]+$/;
const MAX_BUCKET_NAME_LENGTH = 63;

// Storage takes any character in object names except C0 controls and the two noncharacters
// (objects_name_check). DEL is refused too: it has no business in a file name.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this rejects
const FORBIDDEN_KEY_CHARACTER = /[\u0000-\u001f\u007f\ufffe\uffff]/;
const MAX_KEY_BYTES = 1024;
// One key segment becomes one directory name; most filesystems stop at 255 bytes.
const MAX_SEGMENT_BYTES = 255;

const byteLength = (value: string) => new TextEncoder().encode(value).length;

export function assertBucketName(name: unknown): string {
  if (typeof name !== 'string' || name.length > MAX_BUCKET_NAME_LENGTH || !BUCKET_NAME.test(name)) {
    throw invalidBucketName();
  }
  // Legal for Storage, but as directory names they would point at the data root or above it.
  if (name === '.' || name === '..') throw invalidBucketName();
  return name;
}

/**
 * Object keys become directory paths, so beyond Storage's own rules a key must not be
 * absolute, hold empty, `.` or `..` segments, or have a segment too long for a file name.
 */
export function assertObjectKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0) throw invalidKey(typeof key === 'string' ? key : '');
  if (FORBIDDEN_KEY_CHARACTER.test(key) || byteLength(key) > MAX_KEY_BYTES) throw invalidKey(key);
  for (const segment of key.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') throw invalidKey(key);
    if (byteLength(encodeSegment(segment)) > MAX_SEGMENT_BYTES) throw invalidKey(key);
  }
  return key;
}

export function isValidObjectKey(key: string): boolean {
  try {
    assertObjectKey(key);
    return true;
  } catch {
    return false;
  }
}

/**
 * Files the store keeps beside a key's data start with `~`; escaping `~` and `%` in key
 * segments keeps every stored segment from colliding with them, and stays reversible.
 */
export function encodeSegment(segment: string): string {
  return segment.replace(/[~%]/g, (char) => (char === '~' ? '%7E' : '%25'));
}

export function decodeSegment(segment: string): string {
  return segment.replace(/%7E|%25/g, (sequence) => (sequence === '%7E' ? '~' : '%'));
}

/** Names the store uses for itself: never produced by encodeSegment, never a bucket name. */
export const isReservedName = (name: string) => name.startsWith('~');
