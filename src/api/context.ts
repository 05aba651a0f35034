import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Caller } from '#core/caller.ts';
import type { Logger } from '#core/log.ts';
import type { Config } from './config.ts';
import type { Services } from './services/index.ts';

export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    /** The request's logger (middleware/request-log.ts): its id on every line. */
    log: Logger;
    config: Config;
    caller: Caller;
    services: Services;
    /** Work that outlives the response (a streamed answer, its recording); the database stays open for it. */
    background: (work: Promise<unknown>) => void;
  };
}

export type App = OpenAPIHono<AppEnv>;
