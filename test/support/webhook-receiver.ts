import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stack } from './client.ts';

/** One request as it reached the receiver: the body is the raw bytes, before any parsing. */
export interface ReceivedRequest {
  method: string;
  /** Path and query, as sent. */
  path: string;
  /** Header names lower-cased; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** Date.now() when the whole body had arrived. */
  receivedAt: number;
}

/** How the receiver answers one request. */
export interface Answer {
  /** 200 unless told; 302 when `redirectTo` is given without one. */
  status?: number;
  /** Waits this long before answering (a client that gives up first just closes the connection). */
  delayMs?: number;
  /** Answers only once this settles (and `delayMs` has passed): the test decides when. */
  hold?: Promise<unknown>;
  /** Answers with this Location (a path on the receiver, or any URL). */
  redirectTo?: string;
  /** Closes the connection without any answer. */
  hangUp?: boolean;
}

export interface WebhookReceiver {
  /** The origin it listens on: `stack.receiverUrl`, which the workers trust. */
  readonly origin: string;
  /** The full URL of a path on the receiver. */
  url(path: string): string;
  /**
   * How requests to `path` (query ignored) are answered from now on: the first request gets the first
   * answer, the next the second, and so on; the last answer repeats. A path never configured answers 200.
   */
  answer(path: string, ...answers: Answer[]): void;
  /** Every request received so far, or those to one path (query ignored), in order of arrival. */
  requests(path?: string): ReceivedRequest[];
  /** Waits until `path` has received at least `count` requests; throws after `timeoutMs`. */
  waitForRequests(path: string, count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

interface Script {
  answers: Answer[];
  served: number;
}

const pathOnly = (path: string) => path.split('?')[0] as string;

/**
 * A real HTTP server on `stack.receiverUrl`'s port (loopback), where the ingest worker delivers
 * webhooks in the tests. It records every request and answers each path as it was told to.
 */
export async function startWebhookReceiver(origin = stack.receiverUrl): Promise<WebhookReceiver> {
  const target = new URL(origin);
  const received: ReceivedRequest[] = [];
  const scripts = new Map<string, Script>();
  const waiters = new Set<() => void>();

  const nextAnswer = (path: string): Answer => {
    const script = scripts.get(pathOnly(path));
    if (!script || script.answers.length === 0) return {};
    const answer = script.answers[Math.min(script.served, script.answers.length - 1)] as Answer;
    script.served += 1;
    return answer;
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => {});
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      const path = req.url ?? '/';
      received.push({ method: req.method ?? '', path, headers, body: Buffer.concat(chunks), receivedAt: Date.now() });
      for (const wake of waiters) wake();

      const answer = nextAnswer(path);
      const respond = () => {
        if (res.writableEnded || res.destroyed) return;
        if (answer.hangUp) {
          req.socket.destroy();
          return;
        }
        const status = answer.status ?? (answer.redirectTo ? 302 : 200);
        const extra: Record<string, string> = answer.redirectTo
          ? { location: answer.redirectTo.startsWith('/') ? `${target.origin}${answer.redirectTo}` : answer.redirectTo }
          : {};
        res.writeHead(status, { 'content-type': 'application/json', ...extra });
        res.end(JSON.stringify({ received: status < 300 }));
      };
      if (!answer.delayMs && !answer.hold) return respond();
      let timer: NodeJS.Timeout | undefined;
      const delayed = () => {
        if (answer.delayMs) timer = setTimeout(respond, answer.delayMs);
        else respond();
      };
      if (answer.hold) answer.hold.then(delayed, delayed);
      else delayed();
      // The client gave up (a timeout): nothing left to answer.
      res.on('close', () => clearTimeout(timer));
    });
  };

  const server = createServer(handle);
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(target.port), target.hostname, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  const requests = (path?: string) =>
    path === undefined ? [...received] : received.filter((request) => pathOnly(request.path) === pathOnly(path));

  return {
    origin: `${target.protocol}//${target.hostname}:${port}`,
    url: (path) => `${target.protocol}//${target.hostname}:${port}${path}`,
    answer(path, ...answers) {
      scripts.set(pathOnly(path), { answers, served: 0 });
    },
    requests,
    waitForRequests(path, count, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const seen = requests(path);
          if (seen.length < count) return false;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(seen);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${path} received ${requests(path).length} of ${count} requests within ${timeoutMs} ms`));
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    close() {
      return new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
