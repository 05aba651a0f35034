/**
 * The `postgres` fault's cut of open connections (devstack/faults.ts, devstack/postgres/server.ts,
 * devstack/postgres/pglite-wire.ts, devstack/postgres/proxy.ts): done before setting the fault answers, and
 * never leaving a socket that cannot close.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFaults } from '../../devstack/faults.ts';
import { freePort } from '../../devstack/ports.ts';
import { resetSocket } from '../../devstack/postgres/reset-socket.ts';
import { createPostgresServer, type RunningPostgres } from '../../devstack/postgres/server.ts';

/** A server whose accepted sockets `onSocket` gets, and a client connected to it. */
async function socketPair(onSocket: (socket: Socket) => void): Promise<{ client: Socket; server: Server }> {
  const server = createServer(onSocket);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = connect({ host: '127.0.0.1', port: (server.address() as { port: number }).port });
  await new Promise((resolve) => client.once('connect', resolve));
  return { client, server };
}

const closeOf = (socket: Socket) => new Promise<boolean>((resolve) => socket.once('close', resolve));
const errorOf = (socket: Socket) => new Promise<NodeJS.ErrnoException>((resolve) => socket.once('error', resolve));

describe('resetSocket', () => {
  it('resets an open connection: the peer sees ECONNRESET', async () => {
    const accepted: Socket[] = [];
    const { client, server } = await socketPair((socket) => accepted.push(socket));
    await expect.poll(() => accepted.length).toBe(1);
    const reset = errorOf(client);
    resetSocket(accepted[0] as Socket);
    expect((await reset).code).toBe('ECONNRESET');
    expect(accepted[0]?.destroyed).toBe(true);
    await new Promise((resolve) => server.close(resolve));
  });

  it('closes a connection whose FIN is still going out (libuv refuses to reset it)', async () => {
    // As the wire server does on a client's Terminate, then a cut in the same turn of the loop.
    const closed: Promise<boolean>[] = [];
    const { client, server } = await socketPair((socket) => {
      closed.push(closeOf(socket));
      socket.on('error', () => {});
      socket.end();
      process.nextTick(() => resetSocket(socket));
    });
    client.on('error', () => {});
    await expect.poll(() => closed.length).toBe(1);
    // socket.resetAndDestroy() here would emit "reset EINVAL" and never 'close': a leaked descriptor.
    await closed[0];
    client.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
});

describe('setting a postgres fault', () => {
  it('answers only once the open connections are cut', async () => {
    const faults = createFaults();
    const events: string[] = [];
    let finishCut!: () => void;
    faults.onSet(
      'postgres',
      () =>
        new Promise<void>((resolve) => {
          finishCut = () => {
            events.push('cut');
            resolve();
          };
        }),
    );
    const answer = Promise.resolve(
      faults.app.request('/', { method: 'POST', body: JSON.stringify({ service: 'postgres' }) }),
    ).then((response) => {
      events.push('answered');
      return response;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(events).toEqual([]);
    finishCut();
    expect((await answer).status).toBe(200);
    expect(events).toEqual(['cut', 'answered']);
  });
});

describe('the PGlite thread’s cut', () => {
  let pg: RunningPostgres;
  beforeAll(async () => {
    pg = await createPostgresServer({ host: '127.0.0.1', port: await freePort() });
  });
  afterAll(() => pg.stop());

  /** A raw connection on the client's port, past start-up. */
  async function session(port: number): Promise<Socket> {
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('error', () => {});
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
    };
    socket.on('data', onData);
    await new Promise((resolve) => socket.once('connect', resolve));
    const params = Buffer.from('user\0postgres\0database\0postgres\0\0');
    const startup = Buffer.alloc(8 + params.length);
    startup.writeInt32BE(8 + params.length, 0);
    startup.writeInt32BE(196608, 4);
    params.copy(startup, 8);
    socket.write(startup);
    // ReadyForQuery ends the start-up.
    await expect.poll(() => received.includes(Buffer.from([0x5a, 0, 0, 0, 5]))).toBe(true);
    socket.off('data', onData);
    return socket;
  }

  it('has reset the connections when it resolves: a query sent after it is never answered', async () => {
    const proxy = await pg.gate(['worker-a', 'worker-b'], () => true);
    const port = (name: 'worker-a' | 'worker-b') => Number(new URL(proxy.urls[name]).port);
    for (let round = 0; round < 5; round++) {
      const cut = await session(port('worker-a'));
      const spared = await session(port('worker-b'));
      const answers = { cut: 0, spared: 0 };
      cut.on('data', () => answers.cut++);
      spared.on('data', () => answers.spared++);
      const closed = closeOf(cut);
      await proxy.cut('worker-a');
      const query = Buffer.from('Q\0\0\0\x0dselect 1\0', 'latin1');
      cut.write(query);
      spared.write(query);
      await closed;
      expect(answers.cut).toBe(0);
      await expect.poll(() => answers.spared).toBeGreaterThan(0);
      spared.destroy();
    }
  });
});
