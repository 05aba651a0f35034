import { indexOfBytes } from '#core/bytes.ts';

/**
 * Bytes received and not yet consumed, in one buffer that grows by doubling and is compacted
 * in place, so taking in n bytes costs O(n) however small the reads are. Re-copying an
 * accumulated buffer on every read made the upload parser quadratic.
 */
export class ByteQueue {
  private buffer = new Uint8Array(0);
  private start = 0;
  private end = 0;

  get length(): number {
    return this.end - this.start;
  }

  /** The bytes held, valid until the next push. */
  view(): Uint8Array {
    return this.buffer.subarray(this.start, this.end);
  }

  push(chunk: Uint8Array): void {
    if (this.end + chunk.length > this.buffer.length) {
      const needed = this.length + chunk.length;
      if (needed <= this.buffer.length / 2) {
        // Plenty of room once the consumed front is dropped.
        this.buffer.copyWithin(0, this.start, this.end);
      } else {
        const grown = new Uint8Array(Math.max(needed, this.buffer.length * 2, 4096));
        grown.set(this.view());
        this.buffer = grown;
      }
      this.end = this.length;
      this.start = 0;
    }
    this.buffer.set(chunk, this.end);
    this.end += chunk.length;
  }

  /** Drops the first `count` bytes. */
  consume(count: number): void {
    this.start = Math.min(this.end, this.start + count);
    if (this.start === this.end) this.start = this.end = 0;
  }

  /** A copy of the first `count` bytes, consumed. */
  take(count: number): Uint8Array {
    const taken = this.buffer.slice(this.start, this.start + count);
    this.consume(count);
    return taken;
  }

  /** Where `needle` first occurs at or after `from`, or -1. */
  indexOf(needle: Uint8Array, from = 0): number {
    return indexOfBytes(this.view(), needle, from);
  }
}
