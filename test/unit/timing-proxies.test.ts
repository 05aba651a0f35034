import { once } from 'node:events';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { buildAnswerPrompt } from '#retrieval/answer-prompt.ts';
import { overlap, startDbProxy, startModelProxy } from '../../bench/harness/timing-proxies.ts';

const stops: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

function listen(server: Server | ReturnType<typeof createHttpServer>): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
}

const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
/** A typed Postgres message: type byte, length (itself included), body. */
const message = (type: string, body: Buffer = Buffer.alloc(0)) =>
  Buffer.concat([Buffer.from(type), int32(body.length + 4), body]);
const sslRequest = Buffer.concat([int32(8), int32(80877103)]);
const startup = Buffer.concat([int32(8 + 5), int32(196608), Buffer.from('u\0x\0\0')]);
const ready = message('Z', Buffer.from('I'));

/** A scripted Postgres server: answers SSLRequest with `ssl`, start-up with ReadyForQuery, each Query after `queryMs`. */
async function fakePostgres(ssl: 'N' | 'S', queryMs: number) {
  const received: Buffer[] = [];
  const server = createServer((socket) => {
    let stage = 0;
    let pending = Buffer.alloc(0);
    socket.on('data', async (chunk: Buffer) => {
      received.push(chunk);
      pending = Buffer.concat([pending, chunk]);
      if (stage === 0 && pending.length >= 8) {
        pending = pending.subarray(8);
        stage = 1;
        socket.write(ssl);
      }
      if (stage === 1 && pending.length >= startup.length) {
        pending = pending.subarray(startup.length);
        stage = 2;
        socket.write(Buffer.concat([message('R', int32(0)), ready]));
      }
      while (stage === 2 && pending.length >= 5 && pending.length >= pending.readInt32BE(1) + 1) {
        pending = pending.subarray(pending.readInt32BE(1) + 1);
        await sleep(queryMs);
        socket.write(Buffer.concat([message('C', Buffer.from('SELECT 1\0')), ready]));
      }
    });
    socket.on('error', () => {});
  });
  const port = await listen(server);
  stops.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `postgres://u@127.0.0.1:${port}/x`, received };
}

/** Reads until `count` bytes arrived. */
async function readBytes(socket: Socket, count: number): Promise<Buffer> {
  let got = Buffer.alloc(0);
  while (got.length < count) {
    const [chunk] = (await once(socket, 'data')) as [Buffer];
    got = Buffer.concat([got, chunk]);
  }
  return got;
}

describe('startDbProxy', () => {
  it('relays bytes unchanged and records each wait for the server, across split messages', async () => {
    const server = await fakePostgres('N', 40);
    const proxy = await startDbProxy(server.url);
    stops.push(() => proxy.stop());
    expect(new URL(proxy.url).pathname).toBe('/x');

    const port = Number(new URL(proxy.url).port);
    const client = tcpConnect({ host: '127.0.0.1', port });
    await once(client, 'connect');
    client.write(sslRequest);
    expect((await readBytes(client, 1)).toString()).toBe('N');
    client.write(startup);
    await readBytes(client, 9 + ready.length);
    const query = message('Q', Buffer.from('select 1\0'));
    // A message split over two writes must still be read as one.
    client.write(query.subarray(0, 3));
    await sleep(5);
    client.write(query.subarray(3));
    const reply = await readBytes(client, 14 + ready.length);
    expect(reply.subarray(-ready.length)).toEqual(ready);
    client.end();
    await once(client, 'close');

    expect(Buffer.concat(server.received)).toEqual(Buffer.concat([sslRequest, startup, query]));
    const [connection] = proxy.connections;
    expect(proxy.connections).toHaveLength(1);
    expect(connection?.parsed).toBe(true);
    expect(connection?.busy).toHaveLength(2);
    const [, queryWait] = connection?.busy ?? [];
    expect((queryWait?.[1] ?? 0) - (queryWait?.[0] ?? 0)).toBeGreaterThanOrEqual(35);
  });

  it('stops reading a connection that negotiated TLS', async () => {
    const server = await fakePostgres('S', 0);
    const proxy = await startDbProxy(server.url);
    stops.push(() => proxy.stop());
    const client = tcpConnect({ host: '127.0.0.1', port: Number(new URL(proxy.url).port) });
    await once(client, 'connect');
    client.write(sslRequest);
    expect((await readBytes(client, 1)).toString()).toBe('S');
    client.destroy();
    expect(proxy.connections[0]?.parsed).toBe(false);
  });
});

describe('startModelProxy', () => {
  it('streams the response through and records the question, first content and end', async () => {
    const upstream = createHttpServer(async (req, res) => {
      for await (const _ of req) {
        // drain the body
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"delta":{"role":"assistant","content":""}}]}\n\n');
      await sleep(30);
      res.write('data: {"choices":[{"delta":{"content":"Yes"}}]}\n\n');
      await sleep(30);
      res.end('data: [DONE]\n\n');
    });
    const port = await listen(upstream);
    stops.push(() => new Promise((resolve) => upstream.close(resolve)));
    const proxy = await startModelProxy(`http://127.0.0.1:${port}`);
    stops.push(() => proxy.stop());

    const { system, prompt } = buildAnswerPrompt('Does  tea\nhelp?', [{ text: 'Tea helps.', source: 'tea.txt' }]);
    const started = performance.now();
    const response = await fetch(`${proxy.url}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'm',
        stream: true,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: prompt },
        ],
      }),
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(text).toContain('"content":"Yes"');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);

    expect(proxy.calls).toHaveLength(1);
    const call = proxy.calls[0];
    expect(call?.path).toBe('/openai/v1/chat/completions');
    expect(call?.question).toBe('Does tea help?');
    expect(call?.start).toBeGreaterThanOrEqual(started);
    // The role chunk carries an empty content: the first content is the one 30 ms later.
    expect((call?.firstContent ?? 0) - (call?.headers ?? 0)).toBeGreaterThanOrEqual(25);
    expect((call?.end ?? 0) - (call?.firstContent ?? 0)).toBeGreaterThanOrEqual(25);
  });

  it('answers 502 when the upstream cannot be reached', async () => {
    const proxy = await startModelProxy('http://127.0.0.1:1');
    stops.push(() => proxy.stop());
    const response = await fetch(`${proxy.url}/v1/models`);
    expect(response.status).toBe(502);
    expect(await response.text()).toContain('timing proxy');
  });
});

describe('overlap', () => {
  it('adds up the parts of spans inside the window', () => {
    expect(
      overlap(
        [
          [0, 10],
          [15, 30],
          [40, 50],
        ],
        5,
        20,
      ),
    ).toBe(10);
    expect(overlap([[0, 10]], 20, 30)).toBe(0);
  });
});
