import { createServer } from 'node:net';

/**
 * Where free ports are looked for: below the ranges from which kernels pick the local port of an
 * outgoing connection (Linux from 32768, macOS from 49152). A port the kernel handed out with
 * listen(0) came from that range, and between its release here and the bind of the process it was
 * meant for (a `wrangler dev` starting for seconds), any outgoing connection of the busy test run could
 * take it: "Address already in use".
 */
const LOWEST = 10_000;
const HIGHEST = 32_767;

/** Ports this process has handed out, never handed out twice. */
const handedOut = new Set<number>();

/** A free loopback port for a server about to start, for tests that run beside `npm run dev`. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (HIGHEST - LOWEST + 1));
    if (handedOut.has(port) || !(await canListen(port, host))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port on ${host} between ${LOWEST} and ${HIGHEST}`);
}

function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}
