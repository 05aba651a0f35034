import type { z } from 'zod';
import { ConfigSchema } from '../src/api/config.ts';
import { IngestSettings } from '../workers/ingest/src/config.ts';
import { ScoringSettings } from '../workers/scoring/src/config.ts';

export interface DeployedWorker {
  name: 'ingest' | 'scoring' | 'api';
  /** The wrangler config, relative to the project root. */
  config: string;
  /** What the worker itself validates at run time. */
  schema: z.ZodObject;
  /**
   * Settings the worker runs without, but a complete deployment needs: without them the API
   * answers 503 to every upload, or records answers that are never scored. QSTASH_URL has a default,
   * the EU region's URL, which an account in another region cannot use: it is named outright.
   */
  complete: string[];
}

/**
 * The three workers, in the order they are deployed: the API last, so that it never queues work
 * for a worker that is not there yet.
 */
export const WORKERS: DeployedWorker[] = [
  { name: 'ingest', config: 'workers/ingest/wrangler.toml', schema: IngestSettings, complete: ['QSTASH_URL'] },
  {
    name: 'scoring',
    config: 'workers/scoring/wrangler.toml',
    schema: ScoringSettings,
    complete: ['QSTASH_URL', 'QSTASH_TOKEN'],
  },
  {
    name: 'api',
    config: 'wrangler.toml',
    schema: ConfigSchema,
    complete: ['QSTASH_URL', 'QSTASH_TOKEN', 'INGEST_WORKER_URL', 'SCORING_WORKER_URL'],
  },
];

/** Bindings come from wrangler.toml, not from settings. */
const BINDINGS = new Set(['HYPERDRIVE', 'ASSETS']);

/** The settings a worker reads, by name. */
export const settingNames = (worker: DeployedWorker) => Object.keys(worker.schema.shape).filter((name) => !BINDINGS.has(name));
