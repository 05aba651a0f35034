import type { PGlite } from '@electric-sql/pglite';

interface Pending {
  connection: number;
  message: Uint8Array;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (error: unknown) => void;
}

// Front-end message types that end a unit of work: Sync closes an extended-protocol
// batch (Parse/Bind/Describe/Execute), Query is a whole simple query, Terminate leaves.
const SYNC = 0x53;
const QUERY = 0x51;
const TERMINATE = 0x58;

/**
 * Decides which connection's message PGlite runs next. PGlite has one session, so
 * every connection shares its unnamed statement and portal and its transaction.
 * pglite-socket's own queue interleaves connections message by message, which lets
 * one client's Bind clobber another's portal; this one gives a connection the
 * session from its first message until its Sync, and for as long as it holds a
 * transaction open.
 */
export class PGliteScheduler {
  private queue: Pending[] = [];
  private running = false;
  /** The connection that holds the session, mid-batch or mid-transaction. */
  private owner: number | null = null;

  constructor(private readonly db: PGlite) {}

  enqueue(connection: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ connection, message, onData, resolve, reject });
      void this.drain();
    });
  }

  getQueueLength(): number {
    return this.queue.length;
  }

  clearQueueForHandler(connection: number): void {
    this.queue = this.queue.filter((item) => {
      if (item.connection !== connection) return true;
      item.reject(new Error('connection closed'));
      return false;
    });
  }

  /** A connection that goes away must not keep the session, nor leave a transaction open. */
  async clearTransactionIfNeeded(connection: number): Promise<void> {
    if (this.owner !== connection) return;
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    this.owner = null;
    void this.drain();
  }

  private next(): Pending | undefined {
    if (this.owner === null) return this.queue.shift();
    const index = this.queue.findIndex((item) => item.connection === this.owner);
    return index === -1 ? undefined : this.queue.splice(index, 1)[0];
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let item = this.next(); item; item = this.next()) {
        let bytes = 0;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item.message, {
              onRawData: (data) => {
                bytes += data.length;
                item.onData(data);
              },
            }),
          );
        } catch (error) {
          this.owner = null;
          item.reject(error);
          continue;
        }
        const type = item.message[0];
        const endsUnit = type === SYNC || type === QUERY || type === TERMINATE || type === 0; // 0: startup packet
        this.owner = endsUnit && !this.db.isInTransaction() ? null : item.connection;
        item.resolve(bytes);
      }
    } finally {
      this.running = false;
    }
  }
}
