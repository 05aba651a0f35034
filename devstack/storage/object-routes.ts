import type { Context, Hono } from 'hono';
import { authorize, authorizeIfPresent, type Role } from './access.ts';
import { integerField, optionalString, readJsonBody, requiredString, stringArray } from './body.ts';
import type { StorageDeps } from './deps.ts';
import { invalidRequest, keyAlreadyExists, noSuchBucket, noSuchKey, rowLevelSecurity } from './errors.ts';
import { listEntries, normalizePrefix, type SortColumn } from './listing.ts';
import { assertBucketName, assertObjectKey, isValidObjectKey } from './names.ts';
import type { BucketRecord, ObjectRecord } from './records.ts';
import { serveObject } from './serve.ts';
import { receiveUpload } from './upload.ts';

const KEY_ROUTE = ':bucketId/:key{.+}';
const SORT_COLUMNS: SortColumn[] = ['name', 'updated_at', 'created_at', 'last_accessed_at'];
// Storage lets these through at any size limit of 0 and any mime type: they mark empty folders.
const EMPTY_FOLDER_PLACEHOLDER = '.emptyFolderPlaceholder';

const bucketParam = (c: Context) => assertBucketName(c.req.param('bucketId'));
const keyParam = (c: Context) => assertObjectKey(c.req.param('key'));

// A request refused before its body was read still has the body in flight; reading it lets the answer arrive.
async function discardUnreadBody(request: Request): Promise<void> {
  if (!request.body || request.bodyUsed || request.body.locked) return;
  const reader = request.body.getReader();
  try {
    while (!(await reader.read()).done) {
      // discard
    }
  } catch {
    // The client is gone.
  }
}

/**
 * Who may read an object: anyone when its bucket is public, otherwise only the
 * service role, since anon has no select policy on storage.objects.
 */
async function readableBucket(deps: StorageDeps, bucketId: string, role: Role | undefined): Promise<BucketRecord> {
  const bucket = await deps.buckets.get(bucketId);
  if (!bucket || (!bucket.public && role === undefined)) throw noSuchBucket();
  if (!bucket.public && role === 'anon') throw noSuchKey();
  return bucket;
}

function objectInfo(record: ObjectRecord) {
  const { metadata } = record;
  return {
    id: record.id,
    version: record.version,
    name: record.name,
    bucket_id: record.bucket_id,
    size: metadata.size,
    content_type: metadata.mimetype,
    cache_control: metadata.cacheControl,
    etag: metadata.eTag,
    last_modified: metadata.lastModified,
    created_at: record.created_at,
    updated_at: record.updated_at,
    metadata: record.user_metadata ?? {},
  };
}

export function registerObjectRoutes(app: Hono, deps: StorageDeps): void {
  const { buckets, objects } = deps;

  app.post('/object/list/:bucketId', async (c) => {
    const role = authorize(c, deps.keys);
    const bucketId = bucketParam(c);
    const body = await readJsonBody(c);
    const prefix = requiredString(body, 'prefix');
    const search = optionalString(body, 'search') ?? '';
    const limit = integerField(body, 'limit', { minimum: 1, fallback: 100 });
    const offset = integerField(body, 'offset', { minimum: 0, fallback: 0 });
    const sortBy = (body.sortBy ?? {}) as { column?: unknown; order?: unknown };
    const sortColumn = sortBy.column ?? 'name';
    const sortOrder = sortBy.order ?? 'asc';
    if (!SORT_COLUMNS.includes(sortColumn as SortColumn)) {
      throw invalidRequest(`body/sortBy/column must be equal to one of the allowed values: ${SORT_COLUMNS.join(', ')}`);
    }
    if (sortOrder !== 'asc' && sortOrder !== 'desc') {
      throw invalidRequest('body/sortBy/order must be equal to one of the allowed values: asc, desc');
    }
    if (role === 'anon') return c.json([]);
    const found = await objects.findByPrefix(bucketId, normalizePrefix(prefix) + search);
    return c.json(listEntries(found, { prefix, search, limit, offset, sortColumn: sortColumn as SortColumn, sortOrder }));
  });

  app.post('/object/move', async (c) => {
    const role = authorize(c, deps.keys);
    const { source, target } = await transferTargets(c);
    if (role === 'anon') throw noSuchKey();
    await objects.move(source, target);
    return c.json({ message: 'Successfully moved' });
  });

  app.post('/object/copy', async (c) => {
    const role = authorize(c, deps.keys);
    const { source, target } = await transferTargets(c);
    if (role === 'anon') throw noSuchKey();
    await buckets.require(target.bucketId);
    const record = await objects.copy(source, target, c.req.header('x-upsert') === 'true');
    return c.json({ Id: record.id, Key: `${target.bucketId}/${target.key}` });
  });

  const info = (requireKey: boolean) => async (c: Context) => {
    const role = requireKey ? authorize(c, deps.keys) : undefined;
    const bucketId = bucketParam(c);
    const key = keyParam(c);
    await readableBucket(deps, bucketId, role);
    const record = await objects.get(bucketId, key);
    if (!record) throw noSuchKey();
    return c.json(objectInfo(record));
  };
  app.get(`/object/info/public/${KEY_ROUTE}`, info(false));
  app.get(`/object/info/authenticated/${KEY_ROUTE}`, info(true));
  app.get(`/object/info/${KEY_ROUTE}`, info(true));

  app.get(`/object/public/${KEY_ROUTE}`, async (c) => {
    const bucketId = bucketParam(c);
    const key = keyParam(c);
    await readableBucket(deps, bucketId, undefined);
    return serveObject(c, objects, bucketId, key);
  });

  app.get(`/object/authenticated/${KEY_ROUTE}`, async (c) => {
    const role = authorize(c, deps.keys);
    const bucketId = bucketParam(c);
    const key = keyParam(c);
    await readableBucket(deps, bucketId, role);
    return serveObject(c, objects, bucketId, key);
  });

  // Storage serves this path to requests without a key too, which then reach public buckets only.
  app.get(`/object/${KEY_ROUTE}`, async (c) => {
    const role = authorizeIfPresent(c, deps.keys);
    const bucketId = bucketParam(c);
    const key = keyParam(c);
    await readableBucket(deps, bucketId, role);
    return serveObject(c, objects, bucketId, key);
  });

  const upload = (method: 'POST' | 'PUT') => async (c: Context) => {
    try {
      const role = authorize(c, deps.keys);
      const bucketId = bucketParam(c);
      const key = keyParam(c);
      // PUT (update) always overwrites; POST only with x-upsert.
      const upsert = method === 'PUT' || c.req.header('x-upsert') === 'true';
      const bucket = await buckets.require(bucketId);
      if (role === 'anon') throw rowLevelSecurity();
      if (!upsert && (await objects.get(bucketId, key))) throw keyAlreadyExists();

      const placeholder = key.split('/').pop() === EMPTY_FOLDER_PLACEHOLDER;
      const received = await receiveUpload(c.req.raw, {
        stagingPath: deps.layout.tmpPath(),
        maxBytes: placeholder ? 0 : Math.min(bucket.file_size_limit ?? Number.POSITIVE_INFINITY, deps.uploadFileSizeLimit),
        allowedMimeTypes: placeholder ? null : bucket.allowed_mime_types,
      });
      const record = await objects.commit(bucketId, key, received.staged, received, upsert);
      return c.json({ Id: record.id, Key: `${bucketId}/${key}` });
    } catch (error) {
      await discardUnreadBody(c.req.raw);
      throw error;
    }
  };
  app.post(`/object/${KEY_ROUTE}`, upload('POST'));
  app.put(`/object/${KEY_ROUTE}`, upload('PUT'));

  app.delete(`/object/${KEY_ROUTE}`, async (c) => {
    const role = authorize(c, deps.keys);
    const bucketId = bucketParam(c);
    const key = keyParam(c);
    if (role === 'anon') throw noSuchKey();
    const [removed] = await objects.remove(bucketId, [key]);
    if (!removed) throw noSuchKey();
    return c.json({ message: 'Successfully deleted' });
  });

  app.delete('/object/:bucketId', async (c) => {
    const role = authorize(c, deps.keys);
    const bucketId = bucketParam(c);
    const prefixes = stringArray(await readJsonBody(c), 'prefixes');
    if (role === 'anon') return c.json([]);
    // Names that are not valid keys cannot name an object, so they match nothing.
    return c.json(await objects.remove(bucketId, prefixes.filter(isValidObjectKey)));
  });
}

async function transferTargets(c: Context) {
  const body = await readJsonBody(c);
  const bucketId = assertBucketName(requiredString(body, 'bucketId'));
  const sourceKey = assertObjectKey(requiredString(body, 'sourceKey'));
  const destinationKey = assertObjectKey(requiredString(body, 'destinationKey'));
  const destinationBucket = assertBucketName(optionalString(body, 'destinationBucket') ?? bucketId);
  return { source: { bucketId, key: sourceKey }, target: { bucketId: destinationBucket, key: destinationKey } };
}
