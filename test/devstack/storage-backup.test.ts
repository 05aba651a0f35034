import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { createClient } from '@supabase/supabase-js';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportBucket, importBucket, isSafeKey, type Manifest, type StorageTarget } from '../../deploy/storage-backup.ts';
import { freePort } from '../../devstack/ports.ts';
import { createStorageServer } from '../../devstack/storage/server.ts';

// deploy/storage-backup.ts against the devstack's Storage: one project's bucket copied out to a directory
// and into a second project, whose bucket does not exist yet, as a restore after losing a project would.
const root = new URL('../../', import.meta.url).pathname;
let sandbox: string;
const servers: ReturnType<typeof serve>[] = [];

interface Project {
  url: string;
  serviceKey: string;
  storage: ReturnType<typeof createClient>['storage'];
}

async function startProject(name: string): Promise<Project> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const serviceKey = `sb_secret_${name}-service`;
  const app = new Hono().route(
    '/storage/v1',
    createStorageServer({
      rootDir: join(sandbox, name),
      serviceRoleKey: serviceKey,
      anonKey: `sb_publishable_${name}-anon`,
      signingSecret: `${name}-signing`,
      publicUrl: `${url}/storage/v1`,
    }),
  );
  servers.push(
    await new Promise<ReturnType<typeof serve>>((resolve) => {
      const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => resolve(server));
    }),
  );
  const storage = createClient(url, serviceKey, { auth: { persistSession: false, autoRefreshToken: false } }).storage;
  return { url, serviceKey, storage };
}

const target = (project: Project, bucket = 'documents'): StorageTarget => ({
  url: project.url,
  serviceKey: project.serviceKey,
  bucket,
});

async function bytesAt(project: Project, key: string, bucket = 'documents') {
  const { data, error } = await project.storage.from(bucket).download(key);
  if (error || !data) throw new Error(`${key}: ${error?.message}`);
  return { bytes: Buffer.from(await data.arrayBuffer()), type: data.type };
}

const readManifest = async (dir: string) => JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Manifest;

let source: Project;
let restored: Project;
const pdf = randomBytes(300_000);
const png = randomBytes(40_000);
const collection = '0b7e4b1c-5a53-4c1e-9a57-8c7f0e1d2a3b';

beforeAll(async () => {
  sandbox = await mkdtemp(join(tmpdir(), 'storage-backup-'));
  source = await startProject('source');
  restored = await startProject('restored');
  const { error } = await source.storage.createBucket('documents', { public: false, fileSizeLimit: '50MB' });
  if (error) throw error;
  const files = source.storage.from('documents');
  // The product's layout: <collection or personal-user>/<document>/original and figures.
  await files.upload(`${collection}/doc-1/original.pdf`, pdf, { contentType: 'application/pdf' });
  await files.upload(`${collection}/doc-1/figures/page-3.png`, png, { contentType: 'image/png', cacheControl: '60' });
  // A re-chunk's copy of an original: the same bytes under another key.
  await files.copy(`${collection}/doc-1/original.pdf`, `${collection}/doc-2/original.pdf`);
  await files.upload('personal-user-1/doc-3/notes.md', '# Notes\nplain text', { contentType: 'text/markdown' });
});

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  await rm(sandbox, { recursive: true, force: true });
});

describe('storage-backup: export and import', () => {
  it('exports every object with its type and checksum, one file per distinct content', async () => {
    const dir = join(sandbox, 'backup');
    const result = await exportBucket(target(source), dir);
    expect(result).toMatchObject({ objects: 4, downloaded: 4, unchanged: 0, gone: 0, failed: [] });

    const manifest = await readManifest(dir);
    expect(manifest).toMatchObject({
      format: 1,
      complete: true,
      bucket: { id: 'documents', public: false, file_size_limit: 50_000_000 },
    });
    expect(manifest.objects.map((entry) => [entry.key, entry.content_type, entry.size])).toEqual([
      [`${collection}/doc-1/figures/page-3.png`, 'image/png', png.length],
      [`${collection}/doc-1/original.pdf`, 'application/pdf', pdf.length],
      [`${collection}/doc-2/original.pdf`, 'application/pdf', pdf.length],
      ['personal-user-1/doc-3/notes.md', 'text/markdown', 18],
    ]);
    expect(manifest.objects[0]?.cache_control).toBe('max-age=60');
    // The copy's bytes are stored once.
    expect(await readdir(join(dir, 'objects'))).toHaveLength(3);
  });

  it('exports again downloading only what changed, and drops what left the bucket', async () => {
    const dir = join(sandbox, 'backup');
    const files = source.storage.from('documents');
    const before = await readManifest(dir);
    const notes = before.objects.find((entry) => entry.key.endsWith('notes.md'))?.sha256 as string;

    await files.remove(['personal-user-1/doc-3/notes.md']);
    await files.upload(`${collection}/doc-4/original.txt`, 'a new document', { contentType: 'text/plain' });
    const result = await exportBucket(target(source), dir);
    expect(result).toMatchObject({ objects: 4, downloaded: 1, unchanged: 3, failed: [] });
    expect(existsSync(join(dir, 'objects', notes))).toBe(false);
    expect((await readManifest(dir)).objects.map((entry) => entry.key)).toContain(`${collection}/doc-4/original.txt`);
  });

  it('imports into a project without the bucket: the bucket is made as it was, every object byte for byte', async () => {
    const dir = join(sandbox, 'backup');
    const result = await importBucket(target(restored), dir);
    expect(result).toMatchObject({ uploaded: 4, skipped: 0, failed: [] });

    const { data: bucket } = await restored.storage.getBucket('documents');
    expect(bucket).toMatchObject({ public: false, file_size_limit: 50_000_000 });
    const original = await bytesAt(restored, `${collection}/doc-2/original.pdf`);
    expect(original.bytes.equals(pdf)).toBe(true);
    expect(original.type).toBe('application/pdf');
    const figure = await bytesAt(restored, `${collection}/doc-1/figures/page-3.png`);
    expect(figure.bytes.equals(png)).toBe(true);
    const { data: info } = await restored.storage.from('documents').info(`${collection}/doc-1/figures/page-3.png`);
    expect(info).toMatchObject({ contentType: 'image/png', cacheControl: 'max-age=60' });
  });

  it('imports again changing nothing, and leaves a key the bucket holds as it is unless told to overwrite', async () => {
    const dir = join(sandbox, 'backup');
    const key = `${collection}/doc-4/original.txt`;
    await restored.storage.from('documents').upload(key, 'changed since the backup', { upsert: true });
    expect(await importBucket(target(restored), dir)).toMatchObject({ uploaded: 0, skipped: 4, failed: [] });
    expect((await bytesAt(restored, key)).bytes.toString()).toBe('changed since the backup');

    expect(await importBucket(target(restored), dir, { overwrite: true })).toMatchObject({ uploaded: 4, failed: [] });
    expect((await bytesAt(restored, key)).bytes.toString()).toBe('a new document');
  });

  it('refuses a file that is not the bytes exported, importing the rest', async () => {
    const dir = join(sandbox, 'backup');
    const manifest = await readManifest(dir);
    const figure = manifest.objects.find((entry) => entry.key.endsWith('page-3.png'));
    const file = join(dir, 'objects', figure?.sha256 as string);
    const good = await readFile(file);
    await writeFile(file, Buffer.concat([good.subarray(0, 100), Buffer.from('tampered'), good.subarray(108)]));
    try {
      const result = await importBucket(target(restored, 'elsewhere'), dir);
      expect(result.uploaded).toBe(3);
      expect(result.failed).toEqual([`${figure?.key}: its file objects/${figure?.sha256} is missing or not the bytes exported`]);
    } finally {
      await writeFile(file, good);
    }
  });

  it('refuses an unfinished export, and a manifest naming keys outside the bucket', async () => {
    const dir = join(sandbox, 'odd');
    const manifest = await readManifest(join(sandbox, 'backup'));
    await exportBucket(target(source), dir);
    await writeFile(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, complete: false }));
    await expect(importBucket(target(restored, 'odd'), dir)).rejects.toThrow('did not finish');
    const first = manifest.objects[0] as Manifest['objects'][number];
    await writeFile(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, objects: [{ ...first, key: '../escape' }] }));
    await expect(importBucket(target(restored, 'odd'), dir)).rejects.toThrow('cannot be used safely: ../escape');
    expect(['a/b.pdf', 'a/../b', '/a', 'a//b', './a', ''].map(isSafeKey)).toEqual([true, false, false, false, false, false]);
  });

  it('says so when the key is wrong or the bucket missing', async () => {
    await expect(exportBucket({ ...target(source), serviceKey: 'sb_secret_wrong' }, join(sandbox, 'x'))).rejects.toThrow(
      'Invalid API key',
    );
    await expect(exportBucket(target(source, 'no-such-bucket'), join(sandbox, 'x'))).rejects.toThrow(
      'the project has no bucket no-such-bucket',
    );
  });
});

/** The script as an operator runs it, settings from the environment. */
function run(args: string[], project: Project): Promise<{ status: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(root, 'node_modules/.bin/tsx'), ['deploy/storage-backup.ts', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH, SUPABASE_URL: project.url, SUPABASE_SERVICE_ROLE_KEY: project.serviceKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('error', reject);
    child.once('close', (status) => resolve({ status: status ?? 1, output }));
  });
}

describe('npx tsx deploy/storage-backup.ts', () => {
  it('exports with --to and imports with --from, and explains its usage', async () => {
    const dir = join(sandbox, 'cli');
    const exported = await run(['export', '--to', dir], source);
    expect(exported.output).toContain('storage-backup: 4 objects in bucket documents');
    expect(exported.status).toBe(0);
    const imported = await run(['import', '--from', dir, '--bucket', 'from-cli'], restored);
    expect(imported.output).toContain('4 uploaded');
    expect(imported.status).toBe(0);
    expect((await bytesAt(restored, `${collection}/doc-1/original.pdf`, 'from-cli')).bytes.equals(pdf)).toBe(true);

    const usage = await run(['export'], source);
    expect(usage.status).toBe(1);
    expect(usage.output).toContain('usage: npx tsx deploy/storage-backup.ts export --to DIR');
  }, 60_000);
});
