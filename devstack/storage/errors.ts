import type { Context } from 'hono';

/**
 * An error as Supabase Storage renders it: the body carries the status the error
 * stands for (as a string) while the HTTP status is 400 for every client error
 * and 500 for server faults. supabase-js reads statusCode and message from the body.
 */
export class StorageError extends Error {
  constructor(
    /** The status named in the body, e.g. 404 for a missing object. */
    readonly statusCode: number,
    readonly code: string,
    message: string,
    /** The legacy `error` field; Storage falls back to the code when it has none. */
    readonly error: string = code,
  ) {
    super(message);
    this.name = 'StorageError';
  }

  get httpStatus(): 400 | 500 {
    return this.statusCode >= 500 ? 500 : 400;
  }
}

export const noSuchBucket = () => new StorageError(404, 'NoSuchBucket', 'Bucket not found', 'Bucket not found');
export const noSuchKey = () => new StorageError(404, 'NoSuchKey', 'Object not found', 'not_found');
export const bucketAlreadyExists = () => new StorageError(409, 'BucketAlreadyExists', 'The resource already exists', 'Duplicate');
export const keyAlreadyExists = () => new StorageError(409, 'KeyAlreadyExists', 'The resource already exists', 'Duplicate');
export const bucketNotEmpty = () => new StorageError(409, 'ResourceNotEmpty', 'The bucket you tried to delete is not empty');
export const invalidBucketName = () => new StorageError(400, 'InvalidBucketName', 'Bucket name invalid', 'Invalid Input');
export const invalidKey = (key: string) => new StorageError(400, 'InvalidKey', `Invalid key: ${key}`);
export const invalidJwt = (message: string) => new StorageError(400, 'InvalidJWT', message);
export const invalidSignature = () => new StorageError(400, 'InvalidSignature', 'Invalid signature');
export const accessDenied = (message: string) => new StorageError(403, 'AccessDenied', message, 'Unauthorized');
export const rowLevelSecurity = () => accessDenied('new row violates row-level security policy');
export const entityTooLarge = () =>
  new StorageError(413, 'EntityTooLarge', 'The object exceeded the maximum allowed size', 'Payload too large');
export const invalidMimeType = (mimeType: string) =>
  new StorageError(415, 'InvalidMimeType', `mime type ${mimeType} is not supported`, 'invalid_mime_type');
export const invalidFileSizeLimit = () =>
  new StorageError(400, 'InvalidRequest', 'Invalid file size format, hint: use 20GB / 20MB / 30KB / 3B');
export const noContentProvided = (message = 'No content provided') => new StorageError(400, 'InvalidRequest', message);
export const invalidRequest = (message: string) => new StorageError(400, 'InvalidRequest', message);
export const invalidRange = () => new StorageError(400, 'InvalidRange', 'invalid range provided', 'invalid_range');

export function renderError(c: Context, err: unknown): Response {
  if (err instanceof StorageError) {
    return c.json({ statusCode: String(err.statusCode), code: err.code, error: err.error, message: err.message }, err.httpStatus);
  }
  // The cause stays in the devstack log; the client sees Storage's generic answer.
  console.error('[devstack storage] unexpected failure:', err);
  return c.json({ statusCode: '500', code: 'InternalError', error: 'InternalError', message: 'Internal server error' }, 500);
}
