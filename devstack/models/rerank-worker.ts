import { Worker } from 'node:worker_threads';
import type { RerankEngine } from './rerank-engine.ts';
import type { RerankReply, RerankRequest, RerankThreadOptions } from './rerank-thread.ts';

const THREAD = new URL('./rerank-thread.ts', import.meta.url);

/**
 * The rerank engine of rerank-engine.ts in a worker thread (rerank-thread.ts). Resolves once the model is
 * loaded and probed, or rejects with the reason it could not be.
 */
export async function startRerankWorker(dir: string, name: string): Promise<RerankEngine> {
  const thread = new Worker(THREAD, { workerData: { dir, name } satisfies RerankThreadOptions });
  const waiting = new Map<number, { resolve: (r: { scores: number[]; tokens: number }) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let onClosed: (() => void) | undefined;
  let failure: Error | undefined;

  const ready = new Promise<{ model: string }>((resolve, reject) => {
    thread.on('message', (reply: RerankReply) => {
      if ('ready' in reply) return resolve(reply.ready);
      if ('failed' in reply) return reject(new Error(reply.failed));
      if ('closed' in reply) return onClosed?.();
      const pending = waiting.get(reply.id);
      waiting.delete(reply.id);
      if ('error' in reply) pending?.reject(new Error(reply.error));
      else pending?.resolve({ scores: reply.scores, tokens: reply.tokens });
    });
    const fail = (error: Error) => {
      failure = error;
      reject(error);
      for (const pending of waiting.values()) pending.reject(error);
      waiting.clear();
    };
    thread.on('error', fail);
    thread.on('exit', (code) => fail(new Error(`the rerank thread exited (${code})`)));
  });
  const info = await ready.catch(async (error: unknown) => {
    await thread.terminate();
    throw error;
  });

  return {
    ...info,
    score(query, passages, maxTokens) {
      if (failure) return Promise.reject(failure);
      const id = nextId++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        thread.postMessage({ id, query, passages, maxTokens } satisfies RerankRequest);
      });
    },
    async close() {
      if (failure) return;
      const closed = new Promise<void>((resolve) => {
        onClosed = resolve;
      });
      thread.postMessage({ close: true } satisfies RerankRequest);
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
      thread.removeAllListeners('exit');
      await thread.terminate();
    },
  };
}
