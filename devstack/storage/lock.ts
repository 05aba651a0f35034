/**
 * Runs tasks one at a time per key. The store holds it while it changes a bucket's
 * tree, so a rename, a directory cleanup or a bucket delete never interleave.
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(() => task());
    const tail = result.catch(() => undefined);
    this.#tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }

  /** Holds several keys, always taken in the same order so two callers cannot deadlock. */
  async runAll<T>(keys: string[], task: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort();
    const step = (index: number): Promise<T> => {
      const key = sorted[index];
      return key === undefined ? task() : this.run(key, () => step(index + 1));
    };
    return step(0);
  }
}
