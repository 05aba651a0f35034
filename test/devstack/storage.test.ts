import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { createClient } from '@supabase/supabase-js';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../devstack/ports.ts';
import { boundaryOf, type PartHeaders, parseMultipart } from '../../devstack/storage/multipart.ts';
import { createStorageServer } from '../../devstack/storage/server.ts';

const anonKey = 'sb_publishable_storage-test-anon';
const serviceRoleKey = 'sb_secret_storage-test-service';

let sandbox: string;
let rootDir: string;
let url: string;
let httpServer: ReturnType<typeof serve>;
// The app reads the time from here, so expiry is tested without waiting.
let clock = Date.now();

const storage = (key = serviceRoleKey) =>
  createClient(url, key, { auth: { persistSession: false, autoRefreshToken: false } }).storage;
const admin = () => storage();

/** A raw call, for what supabase-js hides: statuses, headers, and requests it would never send. */
async function call(path: string, init: RequestInit = {}) {
  const response = await fetch(`${url}/storage/v1${path}`, init);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, body };
}

const keyHeaders = (key = serviceRoleKey) => ({ apikey: key, Authorization: `Bearer ${key}` });

async function bytesOf(blob: Blob | null): Promise<Buffer> {
  if (!blob) throw new Error('no data');
  return Buffer.from(await blob.arrayBuffer());
}

beforeAll(async () => {
  sandbox = await mkdtemp(join(tmpdir(), 'storage-test-'));
  rootDir = join(sandbox, 'root');
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  const root = new Hono();
  root.route(
    '/storage/v1',
    createStorageServer({
      rootDir,
      serviceRoleKey,
      anonKey,
      signingSecret: 'test-signing-secret',
      publicUrl: `${url}/storage/v1`,
      uploadFileSizeLimit: 200 * 1024 * 1024,
      now: () => clock,
    }),
  );
  httpServer = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const server = serve({ fetch: root.fetch, port, hostname: '127.0.0.1' }, () => resolve(server));
  });
});

afterAll(async () => {
  await new Promise<void>((resolve) => (httpServer ? httpServer.close(() => resolve()) : resolve()));
  await rm(sandbox, { recursive: true, force: true });
});

describe('buckets', () => {
  it('creates a bucket, refuses a duplicate, and reads it back', async () => {
    const created = await admin().createBucket('docs', { public: false, fileSizeLimit: '10MB' });
    expect(created).toEqual({ data: { name: 'docs' }, error: null });

    const duplicate = await admin().createBucket('docs', { public: true });
    expect(duplicate.data).toBeNull();
    expect(duplicate.error).toMatchObject({ status: 400, statusCode: '409', message: 'The resource already exists' });

    const { data: bucket } = await admin().getBucket('docs');
    expect(bucket).toMatchObject({
      id: 'docs',
      name: 'docs',
      public: false,
      type: 'STANDARD',
      file_size_limit: 10_000_000,
      allowed_mime_types: null,
    });
    expect(Date.parse(bucket?.created_at ?? '')).not.toBeNaN();

    const { data: all } = await admin().listBuckets();
    expect(all?.map((b) => b.id)).toContain('docs');
  });

  it('answers a missing bucket and bad names with Storage errors', async () => {
    const missing = await admin().getBucket('nope');
    expect(missing.error).toMatchObject({ status: 400, statusCode: '404', message: 'Bucket not found' });

    for (const name of ['..', '.', 'a/b', 'x'.repeat(64)]) {
      const response = await call('/bucket', {
        method: 'POST',
        headers: { ...keyHeaders(), 'Content-Type': 'application/json' },
        body: JSON.stringify({ id: name, name }),
      });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ statusCode: '400', code: 'InvalidBucketName', message: 'Bucket name invalid' });
    }
    expect((await readdir(rootDir)).sort()).toEqual(['docs', '~tmp']);
  });

  it('refuses to delete a bucket that still holds objects, and deletes it once emptied', async () => {
    await admin().createBucket('scratch');
    await admin().from('scratch').upload('a/b.txt', 'hello');
    const refused = await admin().deleteBucket('scratch');
    expect(refused.error).toMatchObject({ statusCode: '409', message: 'The bucket you tried to delete is not empty' });

    expect(await admin().emptyBucket('scratch')).toEqual({ data: { message: 'Successfully emptied' }, error: null });
    const { data: listed } = await admin().from('scratch').list();
    expect(listed).toEqual([]);
    expect(await admin().deleteBucket('scratch')).toEqual({ data: { message: 'Successfully deleted' }, error: null });
    expect((await admin().getBucket('scratch')).error?.message).toBe('Bucket not found');
    expect(existsSync(join(rootDir, 'scratch'))).toBe(false);
  });

  it('updates a bucket', async () => {
    await admin().createBucket('flip');
    const { error } = await admin().updateBucket('flip', { public: true, allowedMimeTypes: ['image/*'] });
    expect(error).toBeNull();
    const { data } = await admin().getBucket('flip');
    expect(data).toMatchObject({ public: true, allowed_mime_types: ['image/*'], file_size_limit: null });
  });
});

describe('objects', () => {
  const pdfBytes = randomBytes(300_000);

  it('round-trips binary bytes sent raw, keeping the content type', async () => {
    const { data, error } = await admin().from('docs').upload('papers/one.pdf', pdfBytes, { contentType: 'application/pdf' });
    expect(error).toBeNull();
    expect(data).toMatchObject({ path: 'papers/one.pdf', fullPath: 'docs/papers/one.pdf', id: expect.any(String) });

    const download = await admin().from('docs').download('papers/one.pdf');
    expect(download.error).toBeNull();
    expect(download.data?.type).toBe('application/pdf');
    expect((await bytesOf(download.data)).equals(pdfBytes)).toBe(true);
  });

  it('survives a restart, sweeping what a crash left behind', async () => {
    const objectDir = join(rootDir, 'docs', 'papers', 'one.pdf');
    const orphan = join(objectDir, '~data-orphaned-by-a-crash');
    await writeFile(orphan, 'half a file');
    const staleUpload = join(rootDir, '~tmp', 'stale-upload');
    await writeFile(staleUpload, 'partial body');
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    await utimes(staleUpload, twoHoursAgo, twoHoursAgo);

    const restarted = new Hono().route(
      '/storage/v1',
      createStorageServer({ rootDir, serviceRoleKey, anonKey, signingSecret: 'test-signing-secret', publicUrl: url }),
    );
    expect(existsSync(staleUpload)).toBe(false);
    const files = createClient(url, serviceRoleKey, {
      auth: { persistSession: false, autoRefreshToken: false },
      global: { fetch: async (input, init) => restarted.fetch(new Request(input, init)) },
    }).storage.from('docs');

    expect((await bytesOf((await files.download('papers/one.pdf')).data)).equals(pdfBytes)).toBe(true);
    expect((await files.upload('papers/one.pdf', pdfBytes, { contentType: 'application/pdf', upsert: true })).error).toBeNull();
    expect(existsSync(orphan)).toBe(false);
    expect((await readdir(objectDir)).filter((name) => name.startsWith('~data-'))).toHaveLength(1);
  });

  it('round-trips a Blob, which supabase-js sends as multipart form data', async () => {
    const bytes = randomBytes(70_000);
    const blob = new Blob([bytes], { type: 'image/png' });
    const { error } = await admin().from('docs').upload('images/pic.png', blob, { cacheControl: '60' });
    expect(error).toBeNull();

    const { data: info } = await admin().from('docs').info('images/pic.png');
    expect(info).toMatchObject({ contentType: 'image/png', size: bytes.length, cacheControl: 'max-age=60' });
    const { data } = await admin().from('docs').download('images/pic.png');
    expect((await bytesOf(data)).equals(bytes)).toBe(true);
  });

  it('refuses to overwrite without upsert, and overwrites with it or with update', async () => {
    const files = admin().from('docs');
    const first = await files.upload('notes/n.txt', 'first version');
    expect(first.error).toBeNull();

    const again = await files.upload('notes/n.txt', 'second version');
    expect(again.error).toMatchObject({ status: 400, statusCode: '409', message: 'The resource already exists' });
    expect(await (await files.download('notes/n.txt')).data?.text()).toBe('first version');

    const upserted = await files.upload('notes/n.txt', 'second version', { upsert: true });
    expect(upserted.error).toBeNull();
    expect(upserted.data?.id).toBe(first.data?.id);
    expect(await (await files.download('notes/n.txt')).data?.text()).toBe('second version');

    const updated = await files.update('notes/n.txt', 'third version');
    expect(updated.error).toBeNull();
    expect(await (await files.download('notes/n.txt')).data?.text()).toBe('third version');
    expect((await files.exists('notes/n.txt')).data).toBe(true);
    expect((await files.exists('notes/none.txt')).data).toBe(false);
  });

  it('lists the direct children of a prefix, folders included', async () => {
    await admin().createBucket('tree');
    const files = admin().from('tree');
    for (const name of ['folder/b.txt', 'folder/a.txt', 'folder/sub/c.txt', 'folder/sub/deeper/d.txt', 'Other.txt']) {
      clock += 1000;
      expect((await files.upload(name, `content of ${name}`)).error).toBeNull();
    }

    const { data: folder } = await files.list('folder');
    expect(folder?.map((entry) => entry.name)).toEqual(['a.txt', 'b.txt', 'sub']);
    const sub = folder?.find((entry) => entry.name === 'sub');
    expect(sub).toEqual({ name: 'sub', id: null, updated_at: null, created_at: null, last_accessed_at: null, metadata: null });
    const a = folder?.find((entry) => entry.name === 'a.txt');
    expect(a?.id).toEqual(expect.any(String));
    expect(a?.metadata).toMatchObject({ size: 'content of folder/a.txt'.length, mimetype: 'text/plain;charset=UTF-8' });

    const { data: top } = await files.list();
    expect(top?.map((entry) => entry.name)).toEqual(['folder', 'Other.txt']);

    expect((await files.list('folder', { search: 'B' })).data?.map((entry) => entry.name)).toEqual(['b.txt']);
    expect((await files.list('folder', { limit: 1, offset: 1 })).data?.map((entry) => entry.name)).toEqual(['b.txt']);
    const descending = await files.list('folder', { sortBy: { column: 'name', order: 'desc' } });
    expect(descending.data?.map((entry) => entry.name)).toEqual(['sub', 'b.txt', 'a.txt']);
    expect((await files.list('nothing-here')).data).toEqual([]);

    // Sorted by a timestamp, folders come first, then files in upload order.
    const byTime = await files.list('folder', { sortBy: { column: 'created_at', order: 'asc' } });
    expect(byTime.data?.map((entry) => entry.name)).toEqual(['sub', 'b.txt', 'a.txt']);
  });

  it('removes by exact names, returns what it removed, and the object is gone', async () => {
    const files = admin().from('tree');
    const { data, error } = await files.remove(['folder/a.txt', 'folder/missing.txt', 'folder']);
    expect(error).toBeNull();
    expect(data).toHaveLength(1);
    expect(data?.[0]).toMatchObject({ name: 'folder/a.txt', bucket_id: 'tree', id: expect.any(String) });

    const download = await files.download('folder/a.txt');
    expect(download.data).toBeNull();
    expect(download.error).toMatchObject({ status: 400, statusCode: '404', message: 'Object not found' });
    expect((await files.list('folder')).data?.map((entry) => entry.name)).toEqual(['b.txt', 'sub']);

    await files.remove(['folder/sub/deeper/d.txt']);
    expect(existsSync(join(rootDir, 'tree', 'folder', 'sub', 'deeper'))).toBe(false);
  });

  it('lets exactly one of two racing uploads without upsert win', async () => {
    const files = admin().from('tree');
    const results = await Promise.all([files.upload('race.txt', 'left'), files.upload('race.txt', 'right')]);
    expect(results.filter((result) => result.error === null)).toHaveLength(1);
    expect(results.filter((result) => result.error?.statusCode === '409')).toHaveLength(1);
    expect(['left', 'right']).toContain(await (await files.download('race.txt')).data?.text());
  });

  it('moves and copies objects', async () => {
    const files = admin().from('tree');
    expect((await files.copy('Other.txt', 'copies/other.txt')).data).toEqual({ path: 'tree/copies/other.txt' });
    expect((await files.move('copies/other.txt', 'moved/other.txt')).error).toBeNull();
    expect(await (await files.download('moved/other.txt')).data?.text()).toBe('content of Other.txt');
    expect((await files.download('copies/other.txt')).error?.message).toBe('Object not found');
    const clash = await files.copy('Other.txt', 'moved/other.txt');
    expect(clash.error).toMatchObject({ statusCode: '409' });
  });

  it('enforces the bucket size limit and allowed mime types', async () => {
    await admin().createBucket('images', { public: false, fileSizeLimit: 1024, allowedMimeTypes: ['image/png'] });
    const files = admin().from('images');

    const wrongType = await files.upload('a.txt', 'text');
    expect(wrongType.error).toMatchObject({ statusCode: '415', message: 'mime type text/plain;charset=UTF-8 is not supported' });
    const tooBig = await files.upload('big.png', randomBytes(2048), { contentType: 'image/png' });
    expect(tooBig.error).toMatchObject({ statusCode: '413', message: 'The object exceeded the maximum allowed size' });
    const tooBigForm = await files.upload('big.png', new Blob([randomBytes(2048)], { type: 'image/png' }));
    expect(tooBigForm.error).toMatchObject({ statusCode: '413' });
    expect((await files.upload('ok.png', randomBytes(1024), { contentType: 'image/png' })).error).toBeNull();

    // Nothing half-written is left behind by the refused uploads.
    expect(await readdir(join(rootDir, '~tmp'))).toEqual([]);
    expect((await files.list()).data?.map((entry) => entry.name)).toEqual(['ok.png']);
  });

  it('streams a body larger than 50 MB to disk', async () => {
    await admin().createBucket('large');
    const big = randomBytes(55 * 1024 * 1024);
    const { error } = await admin().from('large').upload('big/large.bin', big, { contentType: 'application/octet-stream' });
    expect(error).toBeNull();
    const { data } = await admin().from('large').info('big/large.bin');
    expect(data?.size).toBe(big.length);

    const response = await fetch(`${url}/storage/v1/object/large/big/large.bin`, {
      headers: { ...keyHeaders(), Range: 'bytes=1048576-1048675' },
    });
    expect(response.status).toBe(206);
    expect(Buffer.from(await response.arrayBuffer()).equals(big.subarray(1048576, 1048676))).toBe(true);
  }, 60_000);
});

describe('signed URLs', () => {
  const path = 'signed/doc.pdf';
  const bytes = randomBytes(5000);

  beforeAll(async () => {
    const { error } = await admin().from('docs').upload(path, bytes, { contentType: 'application/pdf' });
    if (error) throw error;
  });

  it('downloads without any key while the token is valid', async () => {
    const { data, error } = await admin().from('docs').createSignedUrl(path, 60);
    expect(error).toBeNull();
    const signedUrl = data?.signedUrl ?? '';
    expect(signedUrl.startsWith(`${url}/storage/v1/object/sign/docs/${path}?token=`)).toBe(true);

    const response = await fetch(signedUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);

    const asDownload = await fetch(`${signedUrl}&download=report.pdf`);
    expect(asDownload.headers.get('content-disposition')).toContain('attachment; filename=report.pdf');
  });

  it('signs several paths, reporting the ones that do not exist', async () => {
    const { data } = await admin().from('docs').createSignedUrls([path, 'signed/missing.pdf'], 60);
    expect(data?.[0]).toMatchObject({ path, error: null });
    expect(data?.[1]).toMatchObject({
      path: 'signed/missing.pdf',
      signedUrl: null,
      error: 'Either the object does not exist or you do not have access to it',
    });
    expect((await fetch(data?.[0]?.signedUrl ?? '')).status).toBe(200);
  });

  it('refuses an expired token', async () => {
    const { data } = await admin().from('docs').createSignedUrl(path, 30);
    clock += 31_000;
    try {
      const response = await call((data?.signedUrl ?? '').slice(`${url}/storage/v1`.length));
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        statusCode: '400',
        code: 'InvalidJWT',
        message: '"exp" claim timestamp check failed',
      });
    } finally {
      clock -= 31_000;
    }
  });

  it('refuses a tampered token and a token for another object', async () => {
    const { data } = await admin().from('docs').createSignedUrl(path, 60);
    const signed = new URL(data?.signedUrl ?? '');
    const token = signed.searchParams.get('token') ?? '';
    const [header, payload, signature] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ url: 'docs/papers/one.pdf', iat: 1, exp: 9_999_999_999 })).toString('base64url');

    const tampered = await call(`/object/sign/docs/papers/one.pdf?token=${header}.${forged}.${signature}`);
    expect(tampered.status).toBe(400);
    expect(tampered.body).toMatchObject({ code: 'InvalidJWT', message: 'signature verification failed' });

    const elsewhere = await call(`/object/sign/docs/papers/one.pdf?token=${header}.${payload}.${signature}`);
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body).toMatchObject({ code: 'InvalidSignature' });

    const garbage = await call(`/object/sign/docs/${path}?token=not-a-jwt`);
    expect(garbage.body).toMatchObject({ statusCode: '400', code: 'InvalidJWT' });
  });
});

describe('keys and access', () => {
  it('gives the anon key no access to a private bucket', async () => {
    const anon = storage(anonKey);
    const download = await anon.from('docs').download('papers/one.pdf');
    expect(download.error).toMatchObject({ statusCode: '404', message: 'Object not found' });
    const signed = await anon.from('docs').createSignedUrl('papers/one.pdf', 60);
    expect(signed.error).toMatchObject({ statusCode: '404' });
    const upload = await anon.from('docs').upload('anon.txt', 'nope');
    expect(upload.error).toMatchObject({ statusCode: '403', message: 'new row violates row-level security policy' });
    // Refused before the body is read, a large upload still gets its answer rather than a reset connection.
    const large = await anon.from('docs').upload('anon.bin', randomBytes(16 * 1024 * 1024));
    expect(large.error).toMatchObject({ statusCode: '403' });
    expect((await anon.from('docs').list('papers')).data).toEqual([]);
    expect((await anon.from('docs').remove(['papers/one.pdf'])).data).toEqual([]);
    expect((await anon.listBuckets()).data).toEqual([]);
    expect((await admin().from('docs').exists('papers/one.pdf')).data).toBe(true);
  });

  it('lets anyone read a public bucket, with or without a key', async () => {
    await admin().createBucket('open', { public: true });
    await admin().from('open').upload('hello.txt', 'hi there', { contentType: 'text/plain' });
    const anonDownload = await storage(anonKey).from('open').download('hello.txt');
    expect(await anonDownload.data?.text()).toBe('hi there');

    const { data } = storage(anonKey).from('open').getPublicUrl('hello.txt');
    const response = await fetch(data.publicUrl);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('hi there');

    const privatePublicUrl = await fetch(admin().from('docs').getPublicUrl('papers/one.pdf').data.publicUrl);
    expect(privatePublicUrl.status).toBe(400);
    expect(await privatePublicUrl.json()).toMatchObject({ statusCode: '404', message: 'Bucket not found' });
  });

  it('refuses a missing or unknown key, and a bearer it cannot verify', async () => {
    const missing = await call('/bucket');
    expect(missing).toMatchObject({ status: 401, body: { statusCode: '401', message: 'No API key found in request' } });
    const unknown = await call('/bucket', { headers: keyHeaders('sb_secret_wrong') });
    expect(unknown).toMatchObject({ status: 401, body: { message: 'Invalid API key' } });
    const badBearer = await call('/bucket', { headers: { apikey: anonKey, Authorization: 'Bearer some.user.jwt' } });
    expect(badBearer).toMatchObject({ status: 400, body: { statusCode: '403', code: 'AccessDenied' } });
    // The secret key in either header is enough.
    expect((await call('/bucket', { headers: { apikey: anonKey, Authorization: `Bearer ${serviceRoleKey}` } })).status).toBe(200);
  });
});

describe('multipart parsing', () => {
  it('reads fields and the file however the body is split into chunks', async () => {
    // Bytes that look like the start of a delimiter, to catch a parser that splits on a partial match.
    const fileBytes = Buffer.concat([Buffer.from('\r\n--'), randomBytes(3000), Buffer.from('\r\n-'), randomBytes(10)]);
    const form = new FormData();
    form.append('cacheControl', '120');
    form.append('', new Blob([fileBytes], { type: 'application/pdf' }), 'doc.pdf');
    form.append('', new Blob([Buffer.from('second file is ignored')]), 'other.txt');
    const request = new Request('http://x/', { method: 'POST', body: form });
    const boundary = boundaryOf(request.headers.get('content-type') ?? '');
    if (!boundary) throw new Error('no boundary');
    const body = Buffer.from(await request.arrayBuffer());

    for (const size of [1, 7, 64, body.length]) {
      const fields: Record<string, string> = {};
      const parts: PartHeaders[] = [];
      const received: Buffer[] = [];
      async function* chunks() {
        for (let at = 0; at < body.length; at += size) yield body.subarray(at, at + size);
      }
      await parseMultipart(chunks(), boundary, {
        field: (name, value) => {
          fields[name] = value;
        },
        fileStart: (part) => {
          parts.push(part);
        },
        fileData: async (chunk) => {
          received.push(Buffer.from(chunk));
        },
      });
      expect(fields, `chunk size ${size}`).toEqual({ cacheControl: '120' });
      expect(parts).toEqual([{ name: '', filename: 'doc.pdf', contentType: 'application/pdf' }]);
      expect(Buffer.concat(received).equals(fileBytes), `chunk size ${size}`).toBe(true);
    }
  });

  it('refuses a body cut short', async () => {
    const truncated = (async function* () {
      yield Buffer.from('--b\r\nContent-Disposition: form-data; name=""; filename="x"\r\n\r\npartial');
    })();
    await expect(
      parseMultipart(truncated, 'b', { field: () => {}, fileStart: () => {}, fileData: async () => {} }),
    ).rejects.toMatchObject({ code: 'InvalidRequest', message: 'Unexpected end of multipart body' });
  });
});

describe('path safety', () => {
  it('refuses keys that would leave the bucket directory', async () => {
    const attempts = [
      '..%2F..%2Fescape.txt',
      'a/..%2F..%2F..%2Fescape.txt',
      '%2Fetc%2Fescape.txt',
      'a%00b.txt',
      'a//b.txt',
      '.%2Fx.txt',
    ];
    for (const attempt of attempts) {
      const response = await call(`/object/docs/${attempt}`, {
        method: 'POST',
        headers: { ...keyHeaders(), 'Content-Type': 'text/plain' },
        body: 'should not be written',
      });
      expect(response.status, attempt).toBe(400);
      expect(response.body, attempt).toMatchObject({ statusCode: '400', code: 'InvalidKey' });
    }
    const viaClient = await admin().from('docs').upload('..%2Fescape.txt', 'nope');
    expect(viaClient.error).toMatchObject({ statusCode: '400' });

    expect(existsSync(join(sandbox, 'escape.txt'))).toBe(false);
    expect(existsSync(join(rootDir, 'escape.txt'))).toBe(false);
    expect(await readdir(sandbox)).toEqual(['root']);
  });

  it('keeps key segments that look like the store’s own files apart from them', async () => {
    const files = admin().from('docs');
    expect((await files.upload('odd/~object.json', 'tilde')).error).toBeNull();
    expect((await files.upload('odd', 'parent')).error).toBeNull();
    expect(await (await files.download('odd/~object.json')).data?.text()).toBe('tilde');
    expect(await (await files.download('odd')).data?.text()).toBe('parent');
    expect((await files.list('odd')).data?.map((entry) => entry.name)).toEqual(['~object.json']);
  });
});
