/**
 * The cross-encoder in a worker thread of its own, for the reason embedding-thread.ts gives: ONNX Runtime
 * runs on the thread that calls it, and a rerank of 30 passages takes seconds. rerank-worker.ts speaks to it.
 */
import { writeFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { loadRerankEngine } from './rerank-engine.ts';

export interface RerankThreadOptions {
  dir: string;
  name: string;
}

export type RerankRequest = { id: number; query: string; passages: string[]; maxTokens?: number } | { close: true };

export type RerankReply =
  | { ready: { model: string } }
  | { failed: string }
  | { id: number; scores: number[]; tokens: number }
  | { id: number; error: string }
  | { closed: true };

const port = parentPort as NonNullable<typeof parentPort>;
const { dir, name } = workerData as RerankThreadOptions;
const reply = (message: RerankReply) => port.postMessage(message);

try {
  writeFileSync('/proc/thread-self/comm', 'rerank');
} catch {}

try {
  const engine = await loadRerankEngine(dir, name);
  port.on('message', (request: RerankRequest) => {
    if ('close' in request) {
      void engine.close().finally(() => reply({ closed: true }));
      return;
    }
    engine.score(request.query, request.passages, request.maxTokens).then(
      ({ scores, tokens }) => reply({ id: request.id, scores, tokens }),
      (error: unknown) => reply({ id: request.id, error: error instanceof Error ? error.message : String(error) }),
    );
  });
  reply({ ready: { model: engine.model } });
} catch (error) {
  reply({ failed: error instanceof Error ? error.message : String(error) });
}
