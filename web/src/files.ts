import { UPLOAD_EXTENSIONS as EXTENSIONS, MAX_DOCUMENT_BYTES as MAX_BYTES } from '../../src/core/contracts/uploads.ts';

/** What the service ingests: the contract's types and its 50 MB limit (the API's own), checked before any byte is sent. */
export const ACCEPT = EXTENSIONS.map((ext) => `.${ext}`).join(',');

/** Why a file cannot be uploaded, in words; null when it may be. */
export function refusal(file: File): string | null {
  const ext = file.name.includes('.') ? file.name.split('.').pop()?.toLowerCase() : '';
  if (!ext || !(EXTENSIONS as readonly string[]).includes(ext)) {
    return `${file.name}: only PDF, Office and OpenDocument, EPUB, CSV, text, Markdown, HTML, JSON, email (EML) and image (PNG, JPEG, WebP) files can be added.`;
  }
  if (file.size > MAX_BYTES) return `${file.name} is ${(file.size / 1024 / 1024).toFixed(1)} MB; the limit is 50 MB.`;
  if (file.size === 0) return `${file.name} is empty.`;
  return null;
}
