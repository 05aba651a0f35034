/**
 * PGlite served on the wire protocol from its own thread (devstack/postgres/pglite-thread.ts,
 * devstack/postgres/pglite-wire.ts): many connections share its one session, each keeping it only
 * inside a transaction or between a Bind and its Sync.
 */
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../devstack/ports.ts';
import { createPostgresServer, type RunningPostgres } from '../../devstack/postgres/server.ts';

let pg: RunningPostgres;
let sql: postgres.Sql;
const clients: postgres.Sql[] = [];

/** A client as the workers make them: unnamed statements only, so every query with parameters is described first. */
function client(max = 2) {
  const made = postgres(pg.url, { max, prepare: false, fetch_types: false, onnotice: () => {} });
  clients.push(made);
  return made;
}

beforeAll(async () => {
  pg = await createPostgresServer({ host: '127.0.0.1', port: await freePort() });
  sql = client(4);
  await sql`create table items (id int primary key, owner int not null, label text not null, extra jsonb)`;
});

afterAll(async () => {
  for (const made of clients) await made.end({ timeout: 1 });
  await pg.stop();
});

/** A raw connection past start-up: what a client that stops half-way through a query looks like. */
async function rawSession(): Promise<{ socket: Socket; received: () => Buffer }> {
  const socket = connect({ host: '127.0.0.1', port: Number(new URL(pg.url).port) });
  let data = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    data = Buffer.concat([data, chunk]);
  });
  await new Promise((resolve) => socket.once('connect', resolve));
  const params = Buffer.from('user\0postgres\0database\0postgres\0\0');
  const startup = Buffer.alloc(8 + params.length);
  startup.writeInt32BE(8 + params.length, 0);
  startup.writeInt32BE(196608, 4);
  params.copy(startup, 8);
  socket.write(startup);
  // ReadyForQuery ends the start-up.
  while (!data.includes(Buffer.from([0x5a, 0, 0, 0, 5]))) await sleep(5);
  data = Buffer.alloc(0);
  return { socket, received: () => data };
}

function message(type: string, body: Buffer): Buffer {
  const out = Buffer.alloc(5 + body.length);
  out.write(type, 0, 'latin1');
  out.writeInt32BE(4 + body.length, 1);
  body.copy(out, 5);
  return out;
}

describe('PGlite on the wire protocol', () => {
  it('keeps twenty clients’ transactions, parameters and errors apart', async () => {
    await Promise.all(
      Array.from({ length: 20 }, async (_, owner) => {
        const own = client();
        for (let i = 0; i < 15; i++) {
          const id = owner * 1000 + i;
          await own.begin(async (tx) => {
            await tx`insert into items ${tx({ id, owner, label: `item ${id}`, extra: tx.json({ id }) })}`;
            const [row] = await tx`select label, extra from items where id = ${id}`;
            expect(row).toEqual({ label: `item ${id}`, extra: { id } });
          });
          await expect(own`select * from missing_table where id = ${id}`).rejects.toThrow(/missing_table/);
          await expect(own`insert into items (id, owner, label) values (${id}, ${owner}, 'again')`).rejects.toThrow(
            /duplicate key/,
          );
          const [mine] = await own<{ count: number }[]>`select count(*)::int as count from items where owner = ${owner}`;
          expect(mine?.count).toBe(i + 1);
        }
      }),
    );
    const [all] = await sql<{ count: number }[]>`select count(*)::int as count from items`;
    expect(all?.count).toBe(300);
  });

  it('does not keep the statements of clients that are done with them', async () => {
    const [prepared] = await sql<{ count: number }[]>`select count(*)::int as count from pg_prepared_statements`;
    // At most the last statement of each connection still open.
    expect(prepared?.count).toBeLessThanOrEqual(clients.length * 2);
  });

  it('lets others use the session while a client waits for a statement’s description', async () => {
    const { socket, received } = await rawSession();
    // Parse, Describe, Flush: and then nothing, as a client does while it waits for the answer.
    const parse = message('P', Buffer.from('\0select $1::int as n\0\0\0', 'latin1'));
    const describe = message('D', Buffer.from('S\0', 'latin1'));
    socket.write(Buffer.concat([parse, describe, message('H', Buffer.alloc(0))]));
    while (received().length === 0) await sleep(5);
    expect(received()[0]).toBe('1'.charCodeAt(0)); // ParseComplete
    const other = client(1);
    const [sum] = await other<{ n: number }[]>`select ${41}::int + 1 as n`;
    expect(sum?.n).toBe(42);
    socket.destroy();
  });

  it('holds others off while a transaction is open, and rolls back one whose client went away', async () => {
    const { socket } = await rawSession();
    socket.write(message('Q', Buffer.from("begin; insert into items values (99999, 0, 'left behind');\0")));
    await sleep(50);
    // The transaction owns the session: another client's query waits for it to end.
    const other = client(1);
    let answered = false;
    const count = other`select count(*)::int as count from items where id = 99999`.then(([row]) => {
      answered = true;
      return row?.count;
    });
    await sleep(200);
    expect(answered).toBe(false);
    // A new connection's start-up does not wait for the transaction: its answer needs no session.
    const started = performance.now();
    const newcomer = await rawSession();
    expect(performance.now() - started).toBeLessThan(1_000);
    newcomer.socket.destroy();
    socket.destroy();
    expect(await count).toBe(0);
  });
});
