/** What a turn on the session did, and whether its connection keeps the session for its next one. */
export interface Turn<T> {
  value: T;
  keep: boolean;
}

interface Task {
  connection: number;
  work: () => Promise<Turn<unknown>> | Turn<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Decides which connection uses PGlite's single session next. Every connection shares
 * that session (its transaction, its unnamed portal), so a connection that is mid-way
 * (inside a transaction, or between a Bind and its Sync) keeps it, and the others wait.
 * Whether a connection keeps it after a turn is the turn's own answer: the wire protocol
 * code knows what the connection left open (devstack/postgres/pglite-wire.ts).
 */
export class SessionScheduler {
  private queue: Task[] = [];
  private running = false;
  /** The connection that holds the session, mid-batch or mid-transaction. */
  private owner: number | null = null;

  /** Runs `work` on the session when it is this connection's turn. */
  submit<T>(connection: number, work: () => Promise<Turn<T>> | Turn<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ connection, work, resolve: resolve as (value: unknown) => void, reject });
      void this.drain();
    });
  }

  /** Refuses a closed connection's waiting work; its clean-up is submitted after this. */
  drop(connection: number): void {
    this.queue = this.queue.filter((task) => {
      if (task.connection !== connection) return true;
      task.reject(new Error('connection closed'));
      return false;
    });
  }

  /** Work waiting for the session, for the tests. */
  get waiting(): number {
    return this.queue.length;
  }

  private next(): Task | undefined {
    if (this.owner === null) return this.queue.shift();
    const index = this.queue.findIndex((task) => task.connection === this.owner);
    return index === -1 ? undefined : this.queue.splice(index, 1)[0];
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let task = this.next(); task; task = this.next()) {
        try {
          const turn = await task.work();
          this.owner = turn.keep ? task.connection : null;
          task.resolve(turn.value);
        } catch (error) {
          this.owner = null;
          task.reject(error);
        }
      }
    } finally {
      this.running = false;
    }
  }
}
