/** CRC-32 (ISO 3309, the same as zlib's), as ZIP entries and PNG chunks use it. */
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** The CRC of `bytes[start, end)`; `previous`, the CRC of what came before, continues it over data read in pieces. */
export function crc32(bytes: Uint8Array | Uint8ClampedArray, start = 0, end = bytes.length, previous = 0): number {
  let c = (previous ^ 0xffffffff) >>> 0;
  for (let i = start; i < end; i++) c = (CRC_TABLE[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
