import type { Context, Hono } from 'hono';
import { authorize } from './access.ts';
import { optionalBoolean, optionalString, readJsonBody, requiredString } from './body.ts';
import type { StorageDeps } from './deps.ts';
import { invalidRequest, noSuchBucket, rowLevelSecurity } from './errors.ts';
import { parseAllowedMimeTypes, parseFileSizeLimit } from './limits.ts';
import { assertBucketName } from './names.ts';
import type { BucketRecord } from './records.ts';

const SORT_COLUMNS = ['id', 'name', 'created_at', 'updated_at'] as const;
type BucketSortColumn = (typeof SORT_COLUMNS)[number];

function queryInteger(c: Context, name: string, minimum: number): number | undefined {
  const raw = c.req.query(name);
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < minimum) throw invalidRequest(`querystring/${name} must be integer >= ${minimum}`);
  return value;
}

function listQuery(c: Context) {
  const sortColumn = c.req.query('sortColumn') ?? 'name';
  const sortOrder = c.req.query('sortOrder') ?? 'asc';
  if (!(SORT_COLUMNS as readonly string[]).includes(sortColumn)) {
    throw invalidRequest(`querystring/sortColumn must be equal to one of the allowed values: ${SORT_COLUMNS.join(', ')}`);
  }
  if (sortOrder !== 'asc' && sortOrder !== 'desc') {
    throw invalidRequest('querystring/sortOrder must be equal to one of the allowed values: asc, desc');
  }
  return {
    limit: queryInteger(c, 'limit', 1),
    offset: queryInteger(c, 'offset', 0) ?? 0,
    search: c.req.query('search')?.toLowerCase() ?? '',
    sortColumn: sortColumn as BucketSortColumn,
    direction: sortOrder === 'desc' ? -1 : 1,
  };
}

/**
 * The bucket API. Buckets are rows under row-level security with no policies granted
 * to anon, so the publishable key sees no buckets and may not create any.
 */
export function registerBucketRoutes(app: Hono, deps: StorageDeps): void {
  const { buckets } = deps;
  // To anon, which sees no buckets, every bucket it names is missing (once the name itself is valid).
  const namedBucket = (c: Context) => {
    const role = authorize(c, deps.keys);
    const bucketId = assertBucketName(c.req.param('bucketId'));
    if (role === 'anon') throw noSuchBucket();
    return bucketId;
  };

  app.get('/bucket', async (c) => {
    if (authorize(c, deps.keys) === 'anon') return c.json([]);
    const { limit, offset, search, sortColumn, direction } = listQuery(c);
    const all = (await buckets.list())
      .filter((bucket) => bucket.name.toLowerCase().includes(search))
      .sort((a, b) => direction * a[sortColumn].localeCompare(b[sortColumn]));
    return c.json(all.slice(offset, limit === undefined ? undefined : offset + limit));
  });

  app.get('/bucket/:bucketId', async (c) => c.json(await buckets.require(namedBucket(c))));

  app.post('/bucket', async (c) => {
    const role = authorize(c, deps.keys);
    const body = await readJsonBody(c);
    const name = assertBucketName(requiredString(body, 'name'));
    const id = assertBucketName(optionalString(body, 'id') || name);
    const type = optionalString(body, 'type');
    if (type !== undefined && type !== 'STANDARD') throw invalidRequest(`The devstack has no ${type} buckets`);
    const isPublic = optionalBoolean(body, 'public') ?? false;
    const fileSizeLimit = parseFileSizeLimit(body.file_size_limit, deps.uploadFileSizeLimit) ?? null;
    const allowedMimeTypes = parseAllowedMimeTypes(body.allowed_mime_types) ?? null;
    if (role === 'anon') throw rowLevelSecurity();
    await buckets.create(id, { public: isPublic, file_size_limit: fileSizeLimit, allowed_mime_types: allowedMimeTypes });
    return c.json({ name });
  });

  app.put('/bucket/:bucketId', async (c) => {
    const role = authorize(c, deps.keys);
    const bucketId = assertBucketName(c.req.param('bucketId'));
    const body = await readJsonBody(c);
    const changes: Partial<Pick<BucketRecord, 'public' | 'file_size_limit' | 'allowed_mime_types'>> = {
      public: optionalBoolean(body, 'public'),
      file_size_limit: parseFileSizeLimit(body.file_size_limit, deps.uploadFileSizeLimit),
      allowed_mime_types: parseAllowedMimeTypes(body.allowed_mime_types),
    };
    if (role === 'anon') throw noSuchBucket();
    await buckets.update(bucketId, changes);
    return c.json({ message: 'Successfully updated' });
  });

  app.delete('/bucket/:bucketId', async (c) => {
    await buckets.delete(namedBucket(c));
    return c.json({ message: 'Successfully deleted' });
  });

  app.post('/bucket/:bucketId/empty', async (c) => {
    await buckets.empty(namedBucket(c));
    return c.json({ message: 'Successfully emptied' });
  });
}
