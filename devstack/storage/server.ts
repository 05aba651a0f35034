import { Hono } from 'hono';
import { cors } from 'hono/cors';
import { GatewayError } from './access.ts';
import { registerBucketRoutes } from './bucket-routes.ts';
import { BucketStore } from './bucket-store.ts';
import type { StorageDeps } from './deps.ts';
import { renderError } from './errors.ts';
import { Layout } from './layout.ts';
import { KeyedMutex } from './lock.ts';
import { registerObjectRoutes } from './object-routes.ts';
import { ObjectStore } from './object-store.ts';
import { registerSignedUrlRoutes } from './signed-url-routes.ts';
import { createUrlSigner } from './signing.ts';
import { prepareStagingArea } from './staging.ts';

export interface StorageOptions {
  /** Files live under this directory (e.g. `.data/storage`); one sub-dir per bucket. Created if missing. */
  rootDir: string;
  /** The project's API keys. The service_role (secret) key bypasses policies; the anon key may only read public buckets. */
  serviceRoleKey: string;
  anonKey: string;
  /** Secret used to sign/verify signed-URL tokens (a string; the lead passes a random per-data-dir value). */
  signingSecret: string;
  /**
   * Public base URL of the storage API, e.g. http://127.0.0.1:54321/storage/v1. Signed URLs are
   * returned relative to it, as Storage does (supabase-js prefixes its own URL); it is kept for
   * callers that build absolute links themselves.
   */
  publicUrl: string;
  /** The global cap on one object's size (Storage's uploadFileSizeLimit); defaults to 5 GiB. */
  uploadFileSizeLimit?: number;
  now?: () => number; // for expiry tests
}

const DEFAULT_UPLOAD_FILE_SIZE_LIMIT = 5 * 1024 ** 3;

/**
 * The subset of the Supabase Storage API that `supabase.storage` uses: buckets, object
 * upload, download, list, remove, move, copy and signed URLs, kept as plain files under
 * rootDir. Routes are relative to /storage/v1: mount with
 * app.route('/storage/v1', createStorageServer(options)).
 */
export function createStorageServer(options: StorageOptions): Hono {
  if (!options.signingSecret) throw new Error('createStorageServer: signingSecret must not be empty');
  const now = options.now ?? Date.now;
  const layout = new Layout(options.rootDir);
  prepareStagingArea(layout.tmpDir);
  const lock = new KeyedMutex();
  const deps: StorageDeps = {
    keys: { serviceRoleKey: options.serviceRoleKey, anonKey: options.anonKey },
    layout,
    buckets: new BucketStore(layout, lock, now),
    objects: new ObjectStore(layout, lock, now),
    signer: createUrlSigner(options.signingSecret, now),
    uploadFileSizeLimit: options.uploadFileSizeLimit ?? DEFAULT_UPLOAD_FILE_SIZE_LIMIT,
  };

  const app = new Hono();
  app.onError((err, c) => {
    if (err instanceof GatewayError) {
      return c.json({ statusCode: '401', error: 'Unauthorized', message: err.message }, 401);
    }
    return renderError(c, err);
  });

  // Browsers upload and download cross-origin; preflights carry no key. pdf.js reads a signed link in byte
  // ranges only where it can see Accept-Ranges, which a cross-origin script sees only when exposed.
  app.use(
    '*',
    cors({
      origin: '*',
      allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
      exposeHeaders: [
        'Accept-Ranges',
        'Content-Length',
        'Content-Type',
        'Content-Range',
        'Content-Disposition',
        'ETag',
        'Last-Modified',
      ],
    }),
  );

  // Order matters: /object/sign, /object/list, /object/info … must win over /object/:bucket/:key.
  registerSignedUrlRoutes(app, deps);
  registerBucketRoutes(app, deps);
  registerObjectRoutes(app, deps);

  // A catch-all route rather than notFound(): a sub-app's notFound handler is not used once mounted.
  app.all('*', (c) =>
    c.json({ statusCode: '404', error: 'Not Found', message: `Route ${c.req.method}:${c.req.path} not found` }, 404),
  );
  return app;
}
