import { Worker } from 'node:worker_threads';
import type { EmbeddingEngine } from './embedding-engine.ts';
import type { EmbeddingSource } from './embedding-source.ts';
import type { EmbeddingReply, EmbeddingRequest, EmbeddingThreadOptions } from './embedding-thread.ts';

const THREAD = new URL('./embedding-thread.ts', import.meta.url);

/**
 * The embedding engine of devstack/models/embedding-engine.ts, run in a worker thread
 * (devstack/models/embedding-thread.ts) so that inference never holds up the event loop.
 * Resolves once the model is loaded and probed, or rejects with the reason it could not be.
 */
export async function startEmbeddingWorker(source: EmbeddingSource, cacheDir: string): Promise<EmbeddingEngine> {
  const thread = new Worker(THREAD, { workerData: { source, cacheDir } satisfies EmbeddingThreadOptions });
  const waiting = new Map<
    number,
    { resolve: (result: { vectors: Float32Array[]; tokens: number }) => void; reject: (error: Error) => void }
  >();
  let nextId = 1;
  let onClosed: (() => void) | undefined;
  let failure: Error | undefined;

  const ready = new Promise<{ model: string; dimension: number; maxTokens: number }>((resolve, reject) => {
    thread.on('message', (reply: EmbeddingReply) => {
      if ('ready' in reply) return resolve(reply.ready);
      if ('failed' in reply) return reject(new Error(reply.failed));
      if ('closed' in reply) return onClosed?.();
      const pending = waiting.get(reply.id);
      waiting.delete(reply.id);
      if ('error' in reply) pending?.reject(new Error(reply.error));
      else pending?.resolve({ vectors: reply.vectors, tokens: reply.tokens });
    });
    // A thread that dies fails what waits on it, and every later call.
    const fail = (error: Error) => {
      failure = error;
      reject(error);
      for (const pending of waiting.values()) pending.reject(error);
      waiting.clear();
    };
    thread.on('error', fail);
    thread.on('exit', (code) => fail(new Error(`the embedding thread exited (${code})`)));
  });
  const info = await ready.catch(async (error: unknown) => {
    await thread.terminate();
    throw error;
  });

  return {
    ...info,
    embed(texts) {
      if (failure) return Promise.reject(failure);
      const id = nextId++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        thread.postMessage({ id, texts } satisfies EmbeddingRequest);
      });
    },
    async close() {
      if (failure) return;
      const closed = new Promise<void>((resolve) => {
        onClosed = resolve;
      });
      thread.postMessage({ close: true } satisfies EmbeddingRequest);
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
      thread.removeAllListeners('exit');
      await thread.terminate();
    },
  };
}
