import { timingSafeEqual } from 'node:crypto';
import { type Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { commands } from './commands.ts';
import { VectorError } from './errors.ts';
import { VectorPersistence } from './persistence.ts';
import { VectorState } from './state.ts';
import type { HnswSettings, IndexShape, IndexType, SimilarityFunction } from './types.ts';

export interface VectorOptions {
  /** Bearer token with full access. */
  token: string;
  /** Bearer token for queries, fetch, range, info and list-namespaces only. */
  readonlyToken?: string;
  /** Persistence directory; memory only when absent. */
  dataDir?: string;
  /** A dataDir made for another index shape is moved aside rather than refused (`npm run reindex`). */
  setAsideMismatch?: boolean;
  /** Index shape, like an Upstash index's fixed configuration. */
  indexType: 'DENSE' | 'SPARSE' | 'HYBRID';
  /** Required for DENSE and HYBRID. */
  dimension?: number;
  /**
   * The model the dense vectors come from, recorded in dataDir: an index made with another one is refused like one
   * of another dimension (or set aside, with setAsideMismatch). Unset: not checked.
   */
  embeddingModel?: string;
  /** Defaults to COSINE. */
  similarityFunction?: 'COSINE' | 'EUCLIDEAN' | 'DOT_PRODUCT';
  /** HNSW graph settings; the defaults reach recall@10 ≥ 0.95 on 100k 384-d vectors (docs/benchmarks.md). */
  hnsw?: Partial<HnswSettings>;
  /** Quiet time after a write before it is saved to dataDir; default 1 s, at most 30 s behind. */
  saveDelayMs?: number;
  log?: (line: string) => void;
}

export interface VectorServer {
  /** Routes relative to the index URL: mount with app.route('/vector', server.app). */
  app: Hono;
  /** Saves pending changes now. */
  flush(): Promise<void>;
  /** Saves pending changes; later requests get 503. */
  close(): Promise<void>;
}

export const defaultHnsw: HnswSettings = { connectivity: 16, expansionAdd: 64, expansionSearch: 128 };

/**
 * The subset of the Upstash Vector REST API that @upstash/vector uses: one index of a fixed
 * shape, namespaces as path suffixes (`/query/{namespace}`), Bearer tokens, and the
 * `{ result }` / `{ error, status }` envelopes. Dense search runs on usearch's HNSW graph,
 * sparse search on exact posting lists.
 */
export async function createVectorServer(options: VectorOptions): Promise<VectorServer> {
  const shape = resolveShape(options);
  const log = options.log ?? (() => {});
  const persistence = options.dataDir
    ? await VectorPersistence.open(options.dataDir, shape, options.setAsideMismatch, options.embeddingModel)
    : undefined;
  const delayMs = options.saveDelayMs ?? 1000;
  const state = new VectorState(
    shape,
    { ...defaultHnsw, ...options.hnsw },
    persistence,
    { delayMs, maxDelayMs: Math.max(delayMs, 30_000) },
    log,
  );
  await state.restore();
  if (options.dataDir) log(`vector: ${shape.indexType} index loaded from ${options.dataDir}`);

  let closed = false;
  const app = new Hono();
  const handle = async (c: Context) => {
    if (closed) return failure(c, new VectorError(503, 'The devstack vector server is closed'));
    const name = c.req.param('command') ?? '';
    const command = commands[name];
    if (!command) return failure(c, new VectorError(404, `Unknown command '${name}'`));
    const access = authorize(c.req.header('authorization'), options);
    if (access === 'none') return failure(c, new VectorError(401, 'Unauthorized: Invalid auth token'));
    if (access === 'read' && command.writes) {
      return failure(c, new VectorError(403, `Forbidden: a read-only token cannot run ${name}`));
    }
    try {
      const text = await c.req.text();
      let body: unknown;
      try {
        body = text.trim() === '' ? undefined : JSON.parse(text);
      } catch {
        throw new VectorError(400, 'The request body is not valid JSON');
      }
      const result = command.run({ state, namespace: c.req.param('namespace') ?? '', body, query: c.req.query() });
      return c.json({ result });
    } catch (error) {
      if (error instanceof VectorError) return failure(c, error);
      log(`vector: ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      return failure(c, new VectorError(500, `Internal error: ${error instanceof Error ? error.message : String(error)}`));
    }
  };
  app.all('/:command/:namespace{.*}', handle);
  app.all('/:command', handle);

  return {
    app,
    flush: () => state.flush(),
    close: async () => {
      closed = true;
      await state.flush();
    },
  };
}

function resolveShape(options: VectorOptions): IndexShape {
  const indexTypes: IndexType[] = ['DENSE', 'SPARSE', 'HYBRID'];
  const similarities: SimilarityFunction[] = ['COSINE', 'EUCLIDEAN', 'DOT_PRODUCT'];
  if (!indexTypes.includes(options.indexType)) throw new Error(`indexType must be one of ${indexTypes.join(', ')}`);
  const similarityFunction = options.similarityFunction ?? 'COSINE';
  if (!similarities.includes(similarityFunction)) throw new Error(`similarityFunction must be one of ${similarities.join(', ')}`);
  if (options.indexType === 'SPARSE') return { indexType: 'SPARSE', dimension: 0, similarityFunction };
  const dimension = options.dimension;
  if (dimension === undefined || !Number.isInteger(dimension) || dimension < 1) {
    throw new Error(`a ${options.indexType} vector index needs a positive integer dimension`);
  }
  return { indexType: options.indexType, dimension, similarityFunction };
}

function authorize(header: string | undefined, options: VectorOptions): 'full' | 'read' | 'none' {
  const presented = /^Bearer (.+)$/i.exec(header ?? '')?.[1]?.trim();
  if (!presented) return 'none';
  if (sameSecret(presented, options.token)) return 'full';
  if (options.readonlyToken && sameSecret(presented, options.readonlyToken)) return 'read';
  return 'none';
}

function sameSecret(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function failure(c: Context, error: VectorError): Response {
  return c.json({ error: error.message, status: error.status }, error.status as ContentfulStatusCode);
}
