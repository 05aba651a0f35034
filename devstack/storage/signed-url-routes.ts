import type { Context, Hono } from 'hono';
import { authorize } from './access.ts';
import { integerField, readJsonBody, stringArray } from './body.ts';
import type { StorageDeps } from './deps.ts';
import { invalidRequest, noSuchKey } from './errors.ts';
import { assertBucketName, assertObjectKey, isValidObjectKey } from './names.ts';
import { serveObject } from './serve.ts';

// Storage's limit: an expiry must still be a representable date.
const MAX_EXPIRES_IN = Math.floor(Number.MAX_SAFE_INTEGER / 1000) - Math.floor(Date.now() / 1000);
const NOT_FOUND_OR_DENIED = 'Either the object does not exist or you do not have access to it';

function expiresInOf(body: Record<string, unknown>): number {
  const expiresIn = integerField(body, 'expiresIn', { minimum: 1 });
  if (expiresIn > MAX_EXPIRES_IN) throw invalidRequest('Invalid Parameter expiresIn');
  return expiresIn;
}

// Relative to the storage API root, as Storage returns it; supabase-js prefixes its own URL.
const signedPath = (objectPath: string, token: string) => `/object/sign/${objectPath}?token=${token}`;

/**
 * Signed URLs: minting them needs a key and read access to the object; using one
 * needs no key at all, only a token that is unexpired, untampered and for this path.
 */
export function registerSignedUrlRoutes(app: Hono, deps: StorageDeps): void {
  const { objects, signer } = deps;

  app.get('/object/sign/:bucketId/:key{.+}', async (c: Context) => {
    const bucketId = assertBucketName(c.req.param('bucketId'));
    const key = assertObjectKey(c.req.param('key'));
    const token = c.req.query('token');
    if (!token) throw invalidRequest("querystring must have required property 'token'");
    await signer.verify(token, `${bucketId}/${key}`);
    return serveObject(c, objects, bucketId, key);
  });

  app.post('/object/sign/:bucketId/:key{.+}', async (c: Context) => {
    const role = authorize(c, deps.keys);
    const bucketId = assertBucketName(c.req.param('bucketId'));
    const key = assertObjectKey(c.req.param('key'));
    const expiresIn = expiresInOf(await readJsonBody(c));
    // anon holds no select policy on storage.objects, so to it every object is missing.
    if (role === 'anon' || !(await objects.get(bucketId, key))) throw noSuchKey();
    const objectPath = `${bucketId}/${key}`;
    return c.json({ signedURL: signedPath(objectPath, await signer.sign(objectPath, expiresIn)) });
  });

  app.post('/object/sign/:bucketId', async (c: Context) => {
    const role = authorize(c, deps.keys);
    const bucketId = assertBucketName(c.req.param('bucketId'));
    const body = await readJsonBody(c);
    const expiresIn = expiresInOf(body);
    const paths = stringArray(body, 'paths');
    const results = [];
    for (const path of paths) {
      // An invalid key names no object.
      const exists = role === 'service_role' && isValidObjectKey(path) && (await objects.get(bucketId, path)) !== undefined;
      const objectPath = `${bucketId}/${path}`;
      results.push(
        exists
          ? { error: null, path, signedURL: signedPath(objectPath, await signer.sign(objectPath, expiresIn)) }
          : { error: NOT_FOUND_OR_DENIED, path, signedURL: null },
      );
    }
    return c.json(results);
  });
}
