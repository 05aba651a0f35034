import type { ObjectStore } from '#core/adapters/storage.ts';
import { type DocType, detectUploadType } from '#core/documents/detect-type.ts';
import { DomainError } from '#core/errors.ts';
import { uploadTooLarge } from './errors.ts';
import type { FilePart } from './multipart.ts';
import { peek, sha256Passing, TooLarge } from './streams.ts';

/** Enough of the front of a file to sniff its type by. */
const SNIFF_BYTES = 64 * 1024;

/** An upload's original as stored: its sniffed type, where it lies, and the hash of its bytes. */
export interface StoredOriginal {
  type: DocType;
  contentType: string;
  key: string;
  sha256: string;
}

/**
 * Sniffs the file's type, then stores it in `folder` while hashing it, never holding it whole. A type
 * that is not supported is refused before anything is stored; the file's limits end it with a 413, and
 * whatever a failed store left in the folder goes.
 */
export async function storeOriginal(store: ObjectStore, folder: string, file: FilePart): Promise<StoredOriginal> {
  const { head, complete, stream } = await peek(file.body, SNIFF_BYTES).catch(rethrowTooLarge);
  const detected = detectUploadType(file.filename, head, complete);
  if (!detected.ok) throw new DomainError('unsupported_type', detected.reason);

  const key = `${folder}/original.${detected.type}`;
  const hashed = sha256Passing(stream);
  try {
    await store.put(key, hashed.stream, detected.contentType);
  } catch (error) {
    // A partial object may exist if the store accepted some bytes.
    await store.removeFolder(folder).catch(() => {});
    // The limit's own error may reach us wrapped by the store, or not at all.
    if (error instanceof TooLarge || file.tooLarge()) throw uploadTooLarge();
    throw error;
  }
  // A body cut short by the limit can still look complete to the store.
  if (file.tooLarge()) {
    await store.removeFolder(folder);
    throw uploadTooLarge();
  }
  return { type: detected.type, contentType: detected.contentType, key, sha256: await hashed.sha256() };
}

function rethrowTooLarge(error: unknown): never {
  if (error instanceof TooLarge) throw uploadTooLarge();
  throw error;
}
