import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import type { PGlite } from '@electric-sql/pglite';
import { SessionScheduler, type Turn } from './pglite-scheduler.ts';
import { resetSocket } from './reset-socket.ts';

// Start-up packets carry a code where messages carry a type.
const PROTOCOL_3 = 196608;
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;

// Front-end message types.
const BIND = 0x42;
const CLOSE = 0x43;
const DESCRIBE = 0x44;
const EXECUTE = 0x45;
const FLUSH = 0x48;
const PARSE = 0x50;
const QUERY = 0x51;
const SYNC = 0x53;
const TERMINATE = 0x58;
const STATEMENT = 0x53; // 'S' in Describe and Close

// Back-end: ReadyForQuery and its "idle" status.
const READY_FOR_QUERY = 0x5a;
const IDLE = 0x49;

const SYNC_MESSAGE = new Uint8Array([SYNC, 0, 0, 0, 4]);
const ROLLBACK_MESSAGE = query('ROLLBACK');
/** Postgres's own default; a client that sends more before its batch is answered is waiting for nothing. */
const MAX_MESSAGE_BYTES = 1 << 30;

/**
 * Serves PGlite on the Postgres wire protocol. PGlite has one session, and every
 * connection shares it; this makes the sharing as fine-grained as it can be:
 *
 * - A connection's unnamed prepared statement becomes a named one of its own, so that a
 *   client that asks for a statement's description (Parse, Describe, Flush: postgres.js
 *   does, for every query with parameters) can give the session up while it waits for
 *   the answer, instead of holding every other connection up for a round trip. The names
 *   a connection no longer can use are closed when its unit of work ends.
 * - Every message a connection has sent so far runs in one call, and the answer goes out
 *   in one write: a query is one turn on the session, not five.
 *
 * A connection keeps the session inside a transaction and from a Bind to its Sync.
 */
export interface WireServer {
  /**
   * Another port for one named client (a worker), each new connection on it admitted or refused
   * by `admit` before a byte is read: the devstack's `postgres` fault, without a relay in between.
   */
  listenFor(client: string, admit: (client: string) => Promise<boolean>): Promise<number>;
  /**
   * Resets the open connections of every named client whose name contains `match` (all without one).
   * They are reset when it returns: a query sent after it gets no answer.
   */
  cut(match?: string): void;
  waiting(): number;
  close(): Promise<void>;
}

export async function serveWireProtocol(db: PGlite, host: string, port: number): Promise<WireServer> {
  const scheduler = new SessionScheduler();
  const startAnswers = new Map<string, Buffer>();
  /** Every open socket, with the name of the client port it came in on. */
  const sockets = new Map<Socket, string | undefined>();
  const servers: Server[] = [];
  let nextId = 1;
  const serve = (socket: Socket, client?: string) => {
    sockets.set(socket, client);
    socket.setNoDelay(true);
    const connection = new WireConnection(nextId++, socket, db, scheduler, startAnswers);
    socket.on('data', (chunk: Buffer) => connection.receive(chunk));
    socket.on('error', () => socket.destroy());
    socket.once('close', () => {
      sockets.delete(socket);
      connection.closed();
    });
  };
  const open = async (listener: (socket: Socket) => void, at: number): Promise<number> => {
    const server = createServer(listener);
    // A connection costs a socket here, not a backend, and 200 answer streams at once open about as many.
    server.maxConnections = 1024;
    servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(at, host, () => resolve());
    });
    return (server.address() as AddressInfo).port;
  };
  await open((socket) => serve(socket), port);
  return {
    listenFor: (client, admit) =>
      open((socket) => {
        // Paused until admitted, so that nothing the client sent is lost or read early.
        socket.pause();
        socket.on('error', () => {});
        void admit(client).then(
          (ok) => {
            if (!ok || socket.destroyed) return resetSocket(socket);
            serve(socket, client);
            socket.resume();
          },
          () => resetSocket(socket),
        );
      }, 0),
    cut: (match) => {
      for (const [socket, client] of sockets) {
        if (client === undefined || (match && !client.includes(match))) continue;
        // To the client this is a server that is gone; one that just sent Terminate is closing already.
        resetSocket(socket);
      }
    },
    waiting: () => scheduler.waiting,
    // Clients such as wrangler keep their connections open; stopping must not wait on them.
    close: async () => {
      for (const socket of sockets.keys()) socket.destroy();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}

/** One client connection: its framing, its statement names, and its turns on the session. */
class WireConnection {
  private pending: Buffer = Buffer.alloc(0);
  private started = false;
  private startPacket: Uint8Array | undefined;
  private busy = false;
  private gone = false;
  /** Since the last Sync or Query: a Bind or Execute used the (shared) unnamed portal. */
  private portalInUnit = false;
  private readonly names: StatementNames;
  // Plain fields, not parameter properties: this file also runs in a worker thread under Node's own type stripping.
  private readonly id: number;
  private readonly socket: Socket;
  private readonly db: PGlite;
  private readonly scheduler: SessionScheduler;
  /** Start-up answers by start-up packet, shared by every connection. */
  private readonly startAnswers: Map<string, Buffer>;

  constructor(id: number, socket: Socket, db: PGlite, scheduler: SessionScheduler, startAnswers: Map<string, Buffer>) {
    this.id = id;
    this.socket = socket;
    this.db = db;
    this.scheduler = scheduler;
    this.startAnswers = startAnswers;
    this.names = new StatementNames(`__devstack_c${id}_`);
  }

  receive(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    void this.pump();
  }

  /** The client went away: its waiting work is dropped, its transaction rolled back, its statements closed. */
  closed(): void {
    if (this.gone) return;
    this.gone = true;
    this.scheduler.drop(this.id);
    const names = this.names.closeAll();
    this.scheduler
      .submit(this.id, async () => {
        // This runs when the session is ours or no one's: a transaction open now is ours to end.
        const rollback = this.db.isInTransaction() ? [ROLLBACK_MESSAGE] : [];
        await this.discard([SYNC_MESSAGE, ...rollback, ...names, SYNC_MESSAGE]);
        return { value: undefined, keep: false };
      })
      .catch(() => {});
  }

  private async pump(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      while (!this.gone) {
        const work = this.started ? this.takeMessages() : this.startUp();
        if (work === 'terminate') {
          this.socket.end();
          return;
        }
        if (work === 'again') continue;
        if (!work) return;
        const answer =
          work === 'start-up' ? await this.startSession() : await this.scheduler.submit(this.id, () => this.run(work));
        if (answer.length > 0 && !this.gone) this.socket.write(answer);
      }
    } catch {
      // A closed connection's work was dropped, or PGlite failed: the client cannot be answered.
      this.socket.destroy();
    } finally {
      this.busy = false;
    }
  }

  /**
   * The start-up phase: SSL and GSS encryption declined ('again': read on), a cancel request or
   * anything else refused, and the start-up packet kept for the session.
   */
  private startUp(): 'start-up' | 'again' | undefined {
    if (this.pending.length < 8) return undefined;
    const length = this.pending.readInt32BE(0);
    const code = this.pending.readInt32BE(4);
    if (length < 8 || length > 10_000 || code === CANCEL_REQUEST) {
      this.socket.destroy();
      return undefined;
    }
    if (this.pending.length < length) return undefined;
    const packet = this.pending.subarray(0, length);
    this.pending = this.pending.subarray(length);
    if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
      this.socket.write('N');
      return 'again';
    }
    if (code !== PROTOCOL_3) {
      this.socket.destroy();
      return undefined;
    }
    this.started = true;
    this.startPacket = new Uint8Array(packet);
    return 'start-up';
  }

  /**
   * PGlite answers a start-up packet the same way every time (authentication, its settings, a key,
   * ReadyForQuery) and keeps nothing of it: only the first of each kind waits for the session; the
   * others get its answer at once. A new connection never waits behind others' transactions, which
   * at 200 answer streams at once took longer than a client's 10 s connect timeout.
   */
  private async startSession(): Promise<Buffer> {
    const packet = this.startPacket as Uint8Array;
    const key = Buffer.from(packet).toString('base64');
    const known = this.startAnswers.get(key);
    if (known) return known;
    const answer = await this.scheduler.submit(this.id, async () => ({ value: await this.execute(packet), keep: false }));
    // Kept only when it says "idle": one taken mid-way through another connection's transaction would say otherwise.
    if (answer.at(-1) === IDLE && answer.at(-6) === READY_FOR_QUERY) this.startAnswers.set(key, answer);
    return answer;
  }

  /** Every complete message received, renamed where it names the unnamed statement; or a Terminate. */
  private takeMessages(): Message[] | 'terminate' | undefined {
    const messages: Message[] = [];
    let offset = 0;
    while (this.pending.length - offset >= 5) {
      const length = this.pending.readInt32BE(offset + 1) + 1;
      if (length < 5 || length > MAX_MESSAGE_BYTES) {
        this.socket.destroy();
        return undefined;
      }
      if (this.pending.length - offset < length) break;
      const bytes = this.pending.subarray(offset, offset + length);
      offset += length;
      // PGlite takes a Terminate in a batch for its own end; the session must outlive any client.
      if (bytes[0] === TERMINATE) {
        this.pending = Buffer.alloc(0);
        return 'terminate';
      }
      messages.push({ type: bytes[0] as number, bytes: this.names.rename(bytes) });
    }
    this.pending = this.pending.subarray(offset);
    return messages.length > 0 ? messages : undefined;
  }

  /** One turn: the batch, then whether this connection must keep the session. */
  private async run(batch: Message[]): Promise<Turn<Buffer>> {
    const answer = await this.execute(concat(batch.map((message) => message.bytes)));
    for (const { type } of batch) {
      if (type === BIND || type === EXECUTE) this.portalInUnit = true;
      if (type === SYNC || type === QUERY) this.portalInUnit = false;
    }
    const last = (batch.at(-1) as Message).type;
    if (this.db.isInTransaction()) return { value: answer, keep: true };
    if (last === SYNC || last === QUERY) {
      const stale = this.names.closeStale();
      if (stale.length > 0) await this.discard([...stale, SYNC_MESSAGE]);
      return { value: answer, keep: false };
    }
    // Waiting for a description: its statement is its own, so the implicit transaction
    // can end (the Sync's ReadyForQuery is not the client's) and the session go to others.
    if (last === FLUSH && !this.portalInUnit) {
      // The Sync first: after an error Postgres ignores everything up to one.
      const stale = this.names.closeStale();
      await this.discard([SYNC_MESSAGE, ...stale, ...(stale.length > 0 ? [SYNC_MESSAGE] : [])]);
      return { value: answer, keep: false };
    }
    return { value: answer, keep: true };
  }

  /** The raw answer; PGlite's own parsing of it (for its query API) is skipped. */
  private async execute(input: Uint8Array): Promise<Buffer> {
    const parts: Buffer[] = [];
    // onRawData lends a view of PGlite's memory: copy it before the next call reuses it.
    await this.db.execProtocolRawStream(input, { onRawData: (data) => parts.push(Buffer.from(data)) });
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
  }

  /** Messages of our own, whose answers no client asked for. */
  private async discard(messages: Uint8Array[]): Promise<void> {
    await this.db.execProtocolRawStream(concat(messages), { onRawData: () => {} });
  }
}

interface Message {
  type: number;
  bytes: Uint8Array;
}

/**
 * A connection's unnamed statement, under a name of its own. Parse of the unnamed
 * statement makes a new name (Postgres would replace the statement; a name cannot be
 * reused before it is closed), and Bind, Describe and Close of it use the latest.
 */
class StatementNames {
  private latest: string | undefined;
  private stale: string[] = [];
  private count = 0;
  private readonly prefix: string;

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  rename(bytes: Uint8Array): Uint8Array {
    const type = bytes[0];
    if (type === PARSE && bytes[5] === 0) {
      if (this.latest) this.stale.push(this.latest);
      this.latest = `${this.prefix}${++this.count}`;
      return replaceName(bytes, 5, this.latest);
    }
    if (type === BIND) {
      const statementAt = bytes.indexOf(0, 5) + 1;
      return bytes[statementAt] === 0 && this.latest ? replaceName(bytes, statementAt, this.latest) : bytes;
    }
    if ((type === DESCRIBE || type === CLOSE) && bytes[5] === STATEMENT && bytes[6] === 0 && this.latest) {
      const renamed = replaceName(bytes, 6, this.latest);
      if (type === CLOSE) this.latest = undefined;
      return renamed;
    }
    return bytes;
  }

  /** Close messages for the names no later message can use. */
  closeStale(): Uint8Array[] {
    const names = this.stale;
    this.stale = [];
    return names.map(closeStatement);
  }

  closeAll(): Uint8Array[] {
    const names = [...this.stale, ...(this.latest ? [this.latest] : [])];
    this.stale = [];
    this.latest = undefined;
    return names.map(closeStatement);
  }
}

/** The message with the empty name at `at` (its terminating zero) replaced by `name`. */
function replaceName(bytes: Uint8Array, at: number, name: string): Uint8Array {
  const inserted = Buffer.from(name, 'latin1');
  const out = Buffer.allocUnsafe(bytes.length + inserted.length);
  out.set(bytes.subarray(0, at), 0);
  out.set(inserted, at);
  out.set(bytes.subarray(at), at + inserted.length);
  out.writeInt32BE(out.length - 1, 1);
  return out;
}

function closeStatement(name: string): Uint8Array {
  const body = Buffer.from(`S${name}\0`, 'latin1');
  const out = Buffer.allocUnsafe(5 + body.length);
  out[0] = CLOSE;
  out.writeInt32BE(4 + body.length, 1);
  body.copy(out, 5);
  return out;
}

function query(text: string): Uint8Array {
  const body = Buffer.from(`${text}\0`, 'utf8');
  const out = Buffer.allocUnsafe(5 + body.length);
  out[0] = QUERY;
  out.writeInt32BE(4 + body.length, 1);
  body.copy(out, 5);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  return parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts);
}
