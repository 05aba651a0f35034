/** Whether `bytes` holds `prefix` at offset `at` (a file signature, a boundary). */
export function startsWith(bytes: Uint8Array, prefix: ArrayLike<number>, at = 0): boolean {
  if (at < 0 || at + prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}

/** Where `needle` first occurs in `haystack` at or after `from`, or -1. */
export function indexOfBytes(haystack: Uint8Array, needle: ArrayLike<number>, from = 0): number {
  const first = needle[0];
  if (first === undefined) return -1;
  for (
    let i = haystack.indexOf(first, from);
    i !== -1 && i + needle.length <= haystack.length;
    i = haystack.indexOf(first, i + 1)
  ) {
    if (startsWith(haystack, needle, i)) return i;
  }
  return -1;
}

/** Base64 text decoded as UTF-8; '' when it is not base64 (a QStash failure callback's bodies come so). */
export function decodeBase64Text(value: string): string {
  try {
    return new TextDecoder().decode(Uint8Array.from(atob(value), (ch) => ch.charCodeAt(0)));
  } catch {
    return '';
  }
}
