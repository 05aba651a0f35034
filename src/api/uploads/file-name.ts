import { malformedUpload } from './errors.ts';

/**
 * Characters that change how a name is shown without being seen: controls, line and paragraph
 * separators, and the format characters (general category Cf), among them the bidi embeddings,
 * overrides and isolates (U+202A–U+202E, U+2066–U+2069), the direction marks (U+200E, U+200F,
 * U+061C), zero-width spaces and the BOM. An override can make `invoice‮fdp.exe` read as
 * `invoiceexe.pdf`. The zero-width joiner and non-joiner stay: Persian, the Indic scripts and
 * emoji need them, and they reorder nothing.
 */
const INVISIBLE = /(?![\u200c\u200d])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

const MAX_NAME_LENGTH = 255;

/** The name a document is shown under, from an upload's file name. */
export function safeFilename(raw: string): string {
  let name = raw;
  try {
    name = decodeURIComponent(raw);
  } catch {
    // keep it as sent
  }
  // Browsers may send a full path; only the last segment is the file's name.
  name = name.split(/[\\/]/).pop() ?? '';
  name = name.replace(INVISIBLE, '').trim();
  // Cut by code points, so a character outside the BMP is never split in half.
  name = [...name].slice(0, MAX_NAME_LENGTH).join('').trim();
  if (!name) throw malformedUpload('The file has no name');
  return name;
}
