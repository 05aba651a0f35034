import { DomainError, invalid } from '#core/errors.ts';
import { MAX_DOCUMENT_BYTES, MAX_UPLOAD_BYTES_BEFORE_FILE } from '#core/limits.ts';

export const uploadTooLarge = () =>
  new DomainError('too_large', `The file is larger than ${MAX_DOCUMENT_BYTES / 1024 / 1024} MB`);

export const fieldsTooLarge = () =>
  new DomainError(
    'too_large',
    `The form fields before the file hold more than ${MAX_UPLOAD_BYTES_BEFORE_FILE / 1024} KB; send the file first`,
  );

/** A body that is not the multipart form this route takes: 422 on the `file` field. */
export const malformedUpload = (message: string) => invalid('file', message, 'multipart');
