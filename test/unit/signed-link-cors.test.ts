import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStorageServer } from '../../devstack/storage/server.ts';

// The web app (the API worker's origin) opens a cited PDF from the devstack's Storage (another origin) as it
// does from Supabase's: pdf.js fetches the signed link across origins and reads it in byte ranges only where
// it can see Accept-Ranges and the length, so both must be exposed to the page's script.
const serviceRoleKey = 'sb_secret_cors-test';
const bytes = new Uint8Array(300_000).map((_, i) => i % 251);
let sandbox: string;
let app: ReturnType<typeof createStorageServer>;
let signedPath: string;

const asService = { apikey: serviceRoleKey, Authorization: `Bearer ${serviceRoleKey}` };

beforeAll(async () => {
  sandbox = await mkdtemp(join(tmpdir(), 'signed-link-cors-'));
  app = createStorageServer({
    rootDir: sandbox,
    serviceRoleKey,
    anonKey: 'sb_publishable_cors-test',
    signingSecret: 'cors-test-secret',
    publicUrl: 'http://127.0.0.1:1/storage/v1',
  });
  const json = { ...asService, 'Content-Type': 'application/json' };
  await app.request('/bucket', { method: 'POST', headers: json, body: JSON.stringify({ name: 'docs', id: 'docs' }) });
  const upload = await app.request('/object/docs/report.pdf', {
    method: 'POST',
    headers: { ...asService, 'Content-Type': 'application/pdf' },
    body: bytes,
  });
  expect(upload.status).toBe(200);
  const signed = await app.request('/object/sign/docs/report.pdf', {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ expiresIn: 60 }),
  });
  signedPath = ((await signed.json()) as { signedURL: string }).signedURL;
});

afterAll(() => rm(sandbox, { recursive: true, force: true }));

describe('a signed link read from another origin', () => {
  it('answers a byte range, with the headers pdf.js reads exposed', async () => {
    const response = await app.request(signedPath, { headers: { Origin: 'http://127.0.0.1:8787', Range: 'bytes=65536-131071' } });
    expect(response.status).toBe(206);
    expect(response.headers.get('Access-Control-Allow-Origin')).toBe('*');
    expect(response.headers.get('Content-Range')).toBe(`bytes 65536-131071/${bytes.length}`);
    const exposed = (response.headers.get('Access-Control-Expose-Headers') ?? '').toLowerCase().split(/\s*,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['accept-ranges', 'content-length', 'content-range']));
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes.subarray(65536, 131072));
  });

  it('says it takes ranges on the whole file', async () => {
    const response = await app.request(signedPath, { headers: { Origin: 'http://127.0.0.1:8787' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('Accept-Ranges')).toBe('bytes');
    expect(response.headers.get('Content-Length')).toBe(String(bytes.length));
    await response.arrayBuffer();
  });
});
