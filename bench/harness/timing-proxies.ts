/**
 * Loopback proxies that time what passes through them, for the query benchmark: one in front of the
 * devstack's OpenAI-compatible endpoint (per request), one in front of Postgres (when each connection
 * is waiting for the server). Timestamps are `performance.now()` of this process, the clock the
 * benchmark's client uses too.
 */
import { Agent, createServer, type IncomingMessage, request } from 'node:http';
import { createServer as createTcpServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { parseAnswerPrompt } from '../../devstack/models/answer-prompt-parser.ts';

export interface ModelCall {
  method: string;
  path: string;
  status: number;
  /** The question of an answer prompt (src/query/prompt.ts layout), else null. */
  question: string | null;
  /** The request's headers arrived. */
  start: number;
  /** The upstream's response headers arrived. */
  headers: number;
  /** The first streamed chunk with non-empty `delta.content` went out. */
  firstContent: number | null;
  /** The response's last byte went out. */
  end: number;
}

export interface ModelProxy {
  /** Replaces the upstream's origin in an OpenAI base URL. */
  url: string;
  calls: ModelCall[];
  stop(): Promise<void>;
}

const CONTENT_DELTA = /"content":"[^"]/;

/** Forwards every request to `target` (an origin) unchanged, streaming the response, and records its timing. */
export async function startModelProxy(target: string): Promise<ModelProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const calls: ModelCall[] = [];
  const server = createServer((req, res) => {
    const start = performance.now();
    const body: Buffer[] = [];
    req.on('data', (chunk: Buffer) => body.push(chunk));
    req.on('end', () => {
      const payload = Buffer.concat(body);
      const call: ModelCall = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        status: 0,
        question: questionOf(payload),
        start,
        headers: Number.NaN,
        firstContent: null,
        end: Number.NaN,
      };
      const headers = { ...req.headers, host: upstream.host };
      const forward = request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent },
        (upstreamRes: IncomingMessage) => {
          call.headers = performance.now();
          call.status = upstreamRes.statusCode ?? 0;
          res.writeHead(call.status, upstreamRes.headers);
          upstreamRes.on('data', (chunk: Buffer) => {
            if (call.firstContent === null && CONTENT_DELTA.test(chunk.toString('utf8'))) call.firstContent = performance.now();
            res.write(chunk);
          });
          upstreamRes.on('end', () => {
            res.end(() => {
              call.end = performance.now();
              calls.push(call);
            });
          });
          upstreamRes.on('error', () => res.destroy());
        },
      );
      forward.on('error', (error) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`timing proxy: ${error.message}`);
      });
      // The client went away: let the upstream see it too, as it would without the proxy.
      res.on('close', () => {
        if (!res.writableFinished) forward.destroy();
      });
      forward.end(payload);
    });
  });
  // Longer than workerd keeps a pooled connection idle (Node's default 5 s is not), as the devstack's own
  // server does: a worker that reused a connection this proxy had just closed lost its request.
  server.keepAliveTimeout = 65_000;
  await listen(server);
  return {
    url: `http://127.0.0.1:${portOf(server)}`,
    calls,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

function questionOf(payload: Buffer): string | null {
  try {
    const body = JSON.parse(payload.toString('utf8')) as { messages?: { role: string; content: unknown }[] };
    if (!Array.isArray(body.messages)) return null;
    const messages = body.messages.map((m) => ({
      role: m.role as 'user',
      content: typeof m.content === 'string' ? m.content : '',
    }));
    return parseAnswerPrompt(messages).question || null;
  } catch {
    return null;
  }
}

export interface DbConnection {
  /** When the proxy accepted it. */
  opened: number;
  closed: number | null;
  /**
   * Spans during which the client had a query (or the start-up handshake) outstanding: from the
   * first byte of a Sync/Query while idle to the server's ReadyForQuery that settles the last one.
   */
  busy: [number, number][];
  /** False when the stream could not be followed (TLS was negotiated); its spans are then incomplete. */
  parsed: boolean;
}

export interface DbProxy {
  /** `databaseUrl` with the proxy's host and port. */
  url: string;
  connections: DbConnection[];
  stop(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/**
 * Relays Postgres connections to the server of `databaseUrl`, reading the wire protocol's message
 * framing on both sides to see when each connection waits for the server. It changes no byte.
 */
export async function startDbProxy(databaseUrl: string): Promise<DbProxy> {
  const target = new URL(databaseUrl);
  const connections: DbConnection[] = [];
  const sockets = new Set<Socket>();
  const server = createTcpServer((client) => {
    const connection: DbConnection = { opened: performance.now(), closed: null, busy: [], parsed: true };
    connections.push(connection);
    // The start-up handshake counts as outstanding until the server's first ReadyForQuery.
    let outstanding = 1;
    let busySince = connection.opened;
    let sslAnswers = 0;
    const begin = () => {
      if (outstanding++ === 0) busySince = performance.now();
    };
    const settle = () => {
      if (outstanding === 0) return;
      if (--outstanding === 0) connection.busy.push([busySince, performance.now()]);
    };

    // Framing that makes no sense: stop following this connection rather than misread it.
    const lost = () => {
      connection.parsed = false;
      return 0;
    };
    let startup = true;
    const fromClient = frames((buffer) => {
      if (startup) {
        if (buffer.length < 8) return 0;
        const length = buffer.readInt32BE(0);
        if (length < 8) return lost();
        if (buffer.length < length) return 0;
        const code = buffer.readInt32BE(4);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) sslAnswers++;
        else startup = false;
        return length;
      }
      if (buffer.length < 5) return 0;
      const length = buffer.readInt32BE(1) + 1;
      if (length < 5) return lost();
      if (buffer.length < length) return 0;
      const type = String.fromCharCode(buffer[0] as number);
      if (type === 'S' || type === 'Q') begin();
      return length;
    });
    const fromServer = frames((buffer) => {
      if (sslAnswers > 0) {
        if (buffer.length < 1) return 0;
        sslAnswers--;
        // 'S' or 'G': the rest is encrypted and cannot be followed.
        if (buffer[0] !== 0x4e) connection.parsed = false;
        return 1;
      }
      if (buffer.length < 5) return 0;
      const length = buffer.readInt32BE(1) + 1;
      if (length < 5) return lost();
      if (buffer.length < length) return 0;
      if (buffer[0] === 0x5a) settle();
      return length;
    });

    const upstream = tcpConnect({ host: target.hostname, port: Number(target.port || 5432) });
    sockets.add(client).add(upstream);
    client.on('data', (chunk: Buffer) => {
      if (connection.parsed) fromClient(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (connection.parsed) fromServer(chunk);
      client.write(chunk);
    });
    const close = () => {
      connection.closed ??= performance.now();
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const socket of [client, upstream]) {
      socket.on('close', close);
      socket.on('error', close);
    }
  });
  await listen(server);
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(portOf(server));
  return {
    url: url.toString(),
    connections,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Splits a byte stream into messages: `take` returns the length of the message at the front, or 0 for more bytes. */
function frames(take: (buffer: Buffer) => number): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      const length = take(pending);
      if (length === 0) break;
      pending = pending.subarray(length);
    }
  };
}

function listen(server: Server | ReturnType<typeof createServer>): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
}

function portOf(server: Server | ReturnType<typeof createServer>): number {
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('the proxy is not listening');
  return address.port;
}

/** Total length of `spans` inside [from, to]. */
export function overlap(spans: readonly [number, number][], from: number, to: number): number {
  let total = 0;
  for (const [start, end] of spans) total += Math.max(0, Math.min(end, to) - Math.max(start, from));
  return total;
}
