/**
 * The embedding model in a worker thread of its own. ONNX Runtime's Node binding runs a
 * model synchronously on the thread that calls it, so on the devstack's event loop one
 * batch stalled Storage, QStash, Vector and every other request for as long as it ran.
 * devstack/models/embedding-worker.ts starts this and speaks to it.
 */
import { writeFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { loadEmbeddingEngine } from './embedding-engine.ts';
import type { EmbeddingSource } from './embedding-source.ts';

export interface EmbeddingThreadOptions {
  source: EmbeddingSource;
  cacheDir: string;
}

export type EmbeddingRequest = { id: number; texts: string[] } | { close: true };

export type EmbeddingReply =
  | { ready: { model: string; dimension: number; maxTokens: number } }
  | { failed: string }
  | { id: number; vectors: Float32Array[]; tokens: number }
  | { id: number; error: string }
  | { closed: true };

const port = parentPort as NonNullable<typeof parentPort>;
const { source, cacheDir } = workerData as EmbeddingThreadOptions;
const reply = (message: EmbeddingReply, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

try {
  // Named for `top -H` and the load bench's per-thread CPU (Linux; elsewhere the name stays).
  writeFileSync('/proc/thread-self/comm', 'embeddings');
} catch {}

try {
  const engine = await loadEmbeddingEngine(source, cacheDir);
  port.on('message', (request: EmbeddingRequest) => {
    if ('close' in request) {
      void engine.close().finally(() => reply({ closed: true }));
      return;
    }
    engine.embed(request.texts).then(
      // The vectors' memory moves to the other thread rather than being copied.
      ({ vectors, tokens }) =>
        reply(
          { id: request.id, vectors, tokens },
          vectors.map((v) => v.buffer as ArrayBuffer),
        ),
      (error: unknown) => reply({ id: request.id, error: error instanceof Error ? error.message : String(error) }),
    );
  });
  reply({ ready: { model: engine.model, dimension: engine.dimension, maxTokens: engine.maxTokens } });
} catch (error) {
  reply({ failed: error instanceof Error ? error.message : String(error) });
}
