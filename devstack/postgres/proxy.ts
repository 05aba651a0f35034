import { connect, createServer, type Server, type Socket } from 'node:net';
import { resetSocket } from './reset-socket.ts';

export interface PostgresProxy<C extends string> {
  /** Per client, the upstream's connection string with its own proxy port. */
  urls: Record<C, string>;
  /**
   * Resets the open connections of every client whose name contains `match` (all without one), as a
   * crashed server would. They are reset when the promise resolves: a query sent after it gets no answer.
   */
  cut(match?: string): Promise<void>;
  stop(): Promise<void>;
}

export interface PostgresProxyOptions<C extends string> {
  /** The real server (PGlite's socket server or any Postgres). */
  upstream: string;
  host: string;
  /** One port each, so that a fault can take the database down for one client (a worker) alone. */
  clients: readonly C[];
  /** Asked once per new connection; false closes it at once, before a byte reaches the server. */
  admit: (client: C) => boolean;
}

/**
 * A TCP relay in front of Postgres, so that the devstack can take the database down for the
 * workers (the `postgres` fault) whichever engine serves it. Bytes are piped, never parsed:
 * it costs a socket pair per connection and nothing per message.
 */
export async function startPostgresProxy<C extends string>(options: PostgresProxyOptions<C>): Promise<PostgresProxy<C>> {
  const target = new URL(options.upstream);
  const upstreamPort = Number(target.port || 5432);
  /** Each open connection: its client's name, the client's socket and ours to the server. */
  const open = new Set<readonly [C, Socket, Socket]>();

  const relay = (name: C) => (client: Socket) => {
    if (!options.admit(name)) {
      // To the client this is a server that is gone.
      client.on('error', () => {});
      resetSocket(client);
      return;
    }
    const upstream = connect({ host: target.hostname, port: upstreamPort });
    const entry = [name, client, upstream] as const;
    open.add(entry);
    // The protocol is many small messages; Nagle's delay would add up to 40 ms to each exchange.
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.pipe(upstream);
    upstream.pipe(client);
    // A side that closes cleanly is ended on the other (its FIN passed on, after what was in flight);
    // one that fails takes the other down with it.
    const pair = [
      [client, upstream],
      [upstream, client],
    ] as const;
    for (const [socket, peer] of pair) {
      socket.on('error', () => {
        open.delete(entry);
        peer.destroy();
      });
      socket.once('close', () => {
        open.delete(entry);
        peer.end();
      });
    }
  };

  const servers: Server[] = [];
  const urls = {} as Record<C, string>;
  try {
    for (const name of options.clients) {
      const server = createServer(relay(name));
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, options.host, () => resolve());
      });
      const address = server.address();
      if (!address || typeof address === 'string') throw new Error('the Postgres proxy has no TCP address');
      const url = new URL(options.upstream);
      url.hostname = options.host;
      url.port = String(address.port);
      urls[name] = url.toString();
    }
  } catch (error) {
    for (const server of servers) server.close();
    throw error;
  }

  const cut = (match?: string) => {
    for (const entry of [...open]) {
      const [name, client, upstream] = entry;
      if (match && !name.includes(match)) continue;
      open.delete(entry);
      resetSocket(client);
      resetSocket(upstream);
    }
  };
  return {
    urls,
    cut: async (match) => cut(match),
    stop: async () => {
      cut();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}
