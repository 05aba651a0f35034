interface Waiter {
  shared: boolean;
  grant: () => void;
}

interface KeyState {
  readers: number;
  writer: boolean;
  /** First come, first served: a shared holder does not overtake an exclusive one that waits. */
  waiting: Waiter[];
}

/**
 * Runs tasks one at a time per key, or, with runShared, side by side with other shared
 * tasks. The store holds a bucket's key exclusively while it changes the bucket's tree
 * (a rename, a directory clean-up, a bucket delete), so that those never interleave, and
 * shared while it writes one object, so that uploads of different objects do not queue
 * behind each other.
 */
export class KeyedMutex {
  readonly #keys = new Map<string, KeyState>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    return this.#hold(key, false, task);
  }

  runShared<T>(key: string, task: () => Promise<T>): Promise<T> {
    return this.#hold(key, true, task);
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

  async #hold<T>(key: string, shared: boolean, task: () => Promise<T>): Promise<T> {
    await this.#acquire(key, shared);
    try {
      return await task();
    } finally {
      this.#release(key, shared);
    }
  }

  #acquire(key: string, shared: boolean): Promise<void> {
    let state = this.#keys.get(key);
    if (!state) {
      state = { readers: 0, writer: false, waiting: [] };
      this.#keys.set(key, state);
    }
    const free = !state.writer && state.waiting.length === 0 && (shared || state.readers === 0);
    if (free) {
      if (shared) state.readers++;
      else state.writer = true;
      return Promise.resolve();
    }
    return new Promise((grant) => state.waiting.push({ shared, grant }));
  }

  #release(key: string, shared: boolean): void {
    const state = this.#keys.get(key) as KeyState;
    if (shared) state.readers--;
    else state.writer = false;
    // Wake the next exclusive holder once nobody holds the key, or every shared one at the head.
    while (!state.writer && state.waiting.length > 0) {
      const next = state.waiting[0] as Waiter;
      if (!next.shared && state.readers > 0) break;
      state.waiting.shift();
      if (next.shared) state.readers++;
      else state.writer = true;
      next.grant();
      if (!next.shared) break;
    }
    if (!state.writer && state.readers === 0 && state.waiting.length === 0) this.#keys.delete(key);
  }
}
