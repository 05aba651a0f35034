import { Unzlib } from 'fflate';

/**
 * The filters of PDF streams that can expand their input, undone only to be counted: each hands
 * its output on in pieces to the next stage and keeps nothing (pdf-streams.ts counts). Each ends
 * at its own end marker, and on data that is not what it says, as pdf.js stops there too.
 */

/** Past the budget: thrown through a chain of decoders to stop it. */
export class OverBudget extends Error {}
/** The decoder reached its end marker (or its input is not what the filter says): nothing more comes. */
export class Ended extends Error {}

/** A decoder for one of the filters pdf-streams.ts counts (Flate, LZW, RunLength, ASCIIHex, ASCII85). */
export function decoder(filter: string, next: (chunk: Uint8Array) => void): (chunk: Uint8Array) => void {
  switch (filter) {
    case 'FlateDecode':
      return flate(next);
    case 'LZWDecode':
      return lzw(next);
    case 'RunLengthDecode':
      return runLength(next);
    case 'ASCIIHexDecode':
      return asciiHex(next);
    default:
      return ascii85(next);
  }
}

function flate(next: (chunk: Uint8Array) => void): (chunk: Uint8Array) => void {
  const inflater = new Unzlib((chunk) => {
    if (chunk.byteLength > 0) next(chunk);
  });
  // fflate's state: `f` once the last block began, `l` while a block is still being read. Past
  // the end it ignores input but keeps appending it to what it holds, so feeding must stop there.
  const state = (inflater as unknown as { s?: { f?: number; l?: unknown } }).s;
  return (chunk) => {
    try {
      inflater.push(chunk);
    } catch (error) {
      if (error instanceof OverBudget || error instanceof Ended) throw error;
      // Not zlib data, or damaged: pdf.js reads no further than the damage either.
      throw new Ended();
    }
    if (state?.f && !state.l) throw new Ended();
  };
}

/** Output gathered into pieces of this size before it goes to the next stage. */
const PIECE = 64 * 1024;

function output(next: (chunk: Uint8Array) => void) {
  let piece = new Uint8Array(PIECE);
  let used = 0;
  return {
    byte(b: number) {
      piece[used++] = b;
      if (used === PIECE) {
        next(piece);
        piece = new Uint8Array(PIECE);
        used = 0;
      }
    },
    end(): never {
      if (used > 0) next(piece.subarray(0, used));
      used = 0;
      throw new Ended();
    },
  };
}

/** LZW as PDF uses it (early change on): codes of 9 to 12 bits, 256 clears the table, 257 ends. */
function lzw(next: (chunk: Uint8Array) => void): (chunk: Uint8Array) => void {
  const out = output(next);
  // Each table entry: its last byte, the entry it extends, and its length.
  const last = new Uint8Array(4096);
  const prefix = new Int32Array(4096);
  const length = new Int32Array(4096);
  for (let i = 0; i < 256; i++) {
    last[i] = i;
    prefix[i] = -1;
    length[i] = 1;
  }
  const stack = new Uint8Array(4096);
  let size = 258;
  let bits = 9;
  let buffer = 0;
  let held = 0;
  let previous = -1;
  const emit = (code: number): number => {
    let n = 0;
    for (let c = code; c !== -1 && n < 4096; c = prefix[c]!) stack[n++] = last[c]!;
    for (let i = n - 1; i >= 0; i--) out.byte(stack[i]!);
    return stack[n - 1]!;
  };
  return (chunk) => {
    for (const b of chunk) {
      buffer = ((buffer << 8) | b) >>> 0;
      held += 8;
      while (held >= bits) {
        const code = (buffer >>> (held - bits)) & ((1 << bits) - 1);
        held -= bits;
        if (code === 256) {
          size = 258;
          bits = 9;
          previous = -1;
          continue;
        }
        if (code === 257) out.end();
        if (previous === -1) {
          if (code > 255) out.end();
          emit(code);
          previous = code;
          continue;
        }
        if (code > size) out.end();
        let first: number;
        if (code < size) {
          first = emit(code);
        } else {
          first = emit(previous);
          out.byte(first);
        }
        if (size < 4096) {
          last[size] = first;
          prefix[size] = previous;
          length[size] = length[previous]! + 1;
          size++;
        }
        previous = code;
        if (size + 1 >= 1 << bits && bits < 12) bits++;
      }
    }
  };
}

function runLength(next: (chunk: Uint8Array) => void): (chunk: Uint8Array) => void {
  const out = output(next);
  // Bytes still to copy literally, or to repeat (a run's byte is the next input byte).
  let literal = 0;
  let repeat = 0;
  return (chunk) => {
    for (const b of chunk) {
      if (literal > 0) {
        out.byte(b);
        literal--;
      } else if (repeat > 0) {
        for (let i = 0; i < repeat; i++) out.byte(b);
        repeat = 0;
      } else if (b < 128) {
        literal = b + 1;
      } else if (b > 128) {
        repeat = 257 - b;
      } else {
        out.end();
      }
    }
  };
}

function asciiHex(next: (chunk: Uint8Array) => void): (chunk: Uint8Array) => void {
  const out = output(next);
  let high = -1;
  return (chunk) => {
    for (const b of chunk) {
      if (b === 0x3e) out.end();
      const digit = b >= 0x30 && b <= 0x39 ? b - 0x30 : (b | 0x20) >= 0x61 && (b | 0x20) <= 0x66 ? (b | 0x20) - 0x57 : -1;
      if (digit === -1) continue;
      if (high === -1) high = digit;
      else {
        out.byte((high << 4) | digit);
        high = -1;
      }
    }
  };
}

function ascii85(next: (chunk: Uint8Array) => void): (chunk: Uint8Array) => void {
  const out = output(next);
  let group = 0;
  let count = 0;
  return (chunk) => {
    for (const b of chunk) {
      if (b === 0x7e) out.end(); // "~>"
      if (b === 0x7a && count === 0) {
        for (let i = 0; i < 4; i++) out.byte(0);
        continue;
      }
      if (b < 0x21 || b > 0x75) continue;
      group = group * 85 + (b - 0x21);
      if (++count === 5) {
        for (let shift = 24; shift >= 0; shift -= 8) out.byte((group >>> shift) & 0xff);
        group = 0;
        count = 0;
      }
    }
  };
}
