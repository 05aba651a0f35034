import { NamespaceStore } from './namespace.ts';
import type { VectorPersistence } from './persistence.ts';
import { ResumableQueries } from './resumable.ts';
import type { HnswSettings, IndexShape } from './types.ts';

export interface SaveSchedule {
  /** Quiet time after the last write before saving. */
  delayMs: number;
  /** Longest a write waits for its save while writes keep coming. */
  maxDelayMs: number;
}

/** The index's namespaces, and the debounced saving of those that changed. */
export class VectorState {
  private readonly namespaces = new Map<string, NamespaceStore>();
  private readonly dirty = new Set<string>();
  readonly resumable = new ResumableQueries();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private firstDirtyAt = 0;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    readonly shape: IndexShape,
    private readonly hnsw: HnswSettings,
    private readonly persistence: VectorPersistence | undefined,
    private readonly schedule: SaveSchedule,
    private readonly log: (line: string) => void,
  ) {
    // The default namespace always exists, as on Upstash.
    this.namespaces.set('', new NamespaceStore(shape, hnsw));
  }

  get(name: string): NamespaceStore | undefined {
    return this.namespaces.get(name);
  }

  getOrCreate(name: string): NamespaceStore {
    let store = this.namespaces.get(name);
    if (!store) {
      store = new NamespaceStore(this.shape, this.hnsw);
      this.namespaces.set(name, store);
    }
    return store;
  }

  names(): string[] {
    return [...this.namespaces.keys()];
  }

  entries(): [string, NamespaceStore][] {
    return [...this.namespaces];
  }

  /** Removes a namespace; the default one is only emptied. */
  drop(name: string): void {
    if (name === '') this.namespaces.get('')?.clear();
    else this.namespaces.delete(name);
    this.changed(name);
  }

  changed(name: string): void {
    if (!this.persistence) return;
    if (this.dirty.size === 0) this.firstDirtyAt = Date.now();
    this.dirty.add(name);
    clearTimeout(this.timer);
    const wait = Math.max(0, Math.min(this.schedule.delayMs, this.firstDirtyAt + this.schedule.maxDelayMs - Date.now()));
    this.timer = setTimeout(() => {
      this.flush().catch((error: unknown) => this.log(`vector: saving failed, will retry on the next write: ${String(error)}`));
    }, wait);
    this.timer.unref();
  }

  /** Saves every changed namespace now; saves never overlap. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const run = this.saving.then(async () => {
      if (!this.persistence || this.dirty.size === 0) return;
      const changed = new Map([...this.dirty].map((name) => [name, this.namespaces.get(name)] as const));
      this.dirty.clear();
      try {
        await this.persistence.save(changed);
      } catch (error) {
        for (const name of changed.keys()) this.dirty.add(name);
        throw error;
      }
    });
    this.saving = run.catch(() => {});
    return run;
  }

  async restore(): Promise<void> {
    if (!this.persistence) return;
    for (const [name, saved] of await this.persistence.load()) {
      this.getOrCreate(name).restore(saved.records, saved.counters, (dense) => {
        dense.load(saved.graphPath);
        return true;
      });
    }
  }
}
