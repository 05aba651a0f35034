import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWorker, startWorker } from '../../devstack/local/worker.ts';
import { freePort } from '../../devstack/ports.ts';
import { api, makeAdmin, mintToken, signUp, stack } from '../support/client.ts';

describe('public routes', () => {
  it('serves health, the OpenAPI description and the docs page without a token', async () => {
    expect(await api('GET', '/health')).toMatchObject({ status: 200, body: { status: 'ok' } });
    // The page comes from the static assets, and loads Swagger UI from beside it there.
    const docs = await fetch(`${stack.apiUrl}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await docs.text()).toContain('<script src="/docs/swagger-ui-bundle.js">');
    const script = await fetch(`${stack.apiUrl}/docs/swagger-ui-bundle.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect((await script.text()).length).toBeGreaterThan(500_000);
    // A path with no file still reaches the worker: API clients get its JSON 404.
    const missing = await api('GET', '/docs/nothing-here.js');
    expect(missing).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });

  it('describes every endpoint in OpenAPI 3.1, with the bearer scheme and error responses', async () => {
    const { status, body: doc } = await api('GET', '/openapi.json');
    expect(status).toBe(200);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        'GET /health',
        'GET /ready',
        'POST /collections',
        'GET /collections',
        'DELETE /collections/{id}',
        'GET /collections/{id}/config',
        'PUT /collections/{id}/config',
        'POST /collections/{id}/rechunk',
        'GET /collections/{id}/documents',
        'DELETE /collections/{id}/documents/{document_id}',
        'PATCH /collections/{id}/documents/{document_id}',
        'GET /collections/{id}/documents/{document_id}/passages/{chunk_index}',
        'POST /ingest',
        'POST /ingest/url',
        'GET /ingest/jobs',
        'GET /ingest/jobs/{job_id}',
        'POST /ingest/jobs/{job_id}/cancel',
        'GET /ingest/documents',
        'DELETE /ingest/documents/{document_id}',
        'PATCH /ingest/documents/{document_id}',
        'GET /ingest/documents/{document_id}/passages/{chunk_index}',
        'POST /query/search',
        'POST /query',
        'PUT /query/answers/{evaluation_id}/feedback',
        'POST /collections/{id}/shares',
        'GET /collections/{id}/shares',
        'DELETE /collections/{id}/shares/{share_id}',
        'DELETE /collections/{id}/members/{member_id}',
        'POST /collections/join/{share_token}',
        'POST /chat/{collection_id}/sessions',
        'GET /chat/{collection_id}/sessions',
        'GET /chat/{collection_id}/sessions/{session_id}',
        'PATCH /chat/{collection_id}/sessions/{session_id}',
        'DELETE /chat/{collection_id}/sessions/{session_id}',
        'GET /chat/{collection_id}/members',
        'POST /chat/{collection_id}/sessions/{session_id}/share',
        'GET /evals/{collection_id}',
        'GET /evals/{collection_id}/stats',
        'POST /keys',
        'GET /keys',
        'DELETE /keys/{id}',
        'POST /webhooks',
        'GET /webhooks',
        'PATCH /webhooks/{id}',
        'DELETE /webhooks/{id}',
        'GET /webhooks/{id}/deliveries',
        'POST /webhooks/{id}/rotate-secret',
        'POST /sources',
        'GET /sources',
        'GET /sources/{id}',
        'PATCH /sources/{id}',
        'DELETE /sources/{id}',
        'POST /sources/{id}/sync',
        'GET /sources/{id}/runs',
        'GET /sources/{id}/pages',
        'GET /audit',
        'GET /usage',
        'GET /admin/overview',
        'GET /admin/users',
        'GET /admin/jobs',
        'POST /admin/jobs/{id}/retry',
      ].sort(),
    );
    const deleteCollection = doc.paths['/collections/{id}'].delete;
    expect(Object.keys(deleteCollection.responses).sort()).toEqual([
      '200',
      '401',
      '403',
      '404',
      '422',
      '429',
      '500',
      '502',
      '503',
    ]);
    expect(deleteCollection.responses['403'].content['application/json'].schema.$ref).toBe('#/components/schemas/Error');
    expect(doc.paths['/health'].get.security).toEqual([]);
    // Each operation says which credentials it takes: a bearer token, and an API key with one scope, or not.
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    expect(deleteCollection.security).toEqual([{ bearerAuth: [] }, { apiKey: ['collections:write'] }]);
    expect(deleteCollection.description).toContain('an API key with the `collections:write` scope');
    expect(doc.paths['/keys'].post.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths['/keys'].post.description).toContain('a bearer token only');
  });
});

describe('every response', () => {
  it('carries X-Request-Id, echoed in error bodies; a sane incoming id is kept', async () => {
    const ok = await api('GET', '/health');
    expect(ok.headers.get('x-request-id')).toMatch(/^[\w-]+$/);
    const refused = await api('GET', '/collections/');
    expect(refused.body.request_id).toBe(refused.headers.get('x-request-id'));
    const traced = await api('GET', '/health', { headers: { 'X-Request-Id': 'trace-123' } });
    expect(traced.headers.get('x-request-id')).toBe('trace-123');
  });

  it('answers unknown paths with the error shape', async () => {
    const user = await signUp('lost');
    const response = await api('GET', '/nowhere', { token: user.token });
    expect(response).toMatchObject({ status: 404, body: { detail: 'Not found', code: 'not_found' } });
  });
});

describe('tokens', () => {
  it('accepts a refreshed token and reads admin from app_metadata.is_admin', async () => {
    const user = await signUp('refresher');
    const refreshed = await fetch(`${stack.supabaseUrl}/auth/v1/token?grant_type=refresh_token`, {
      method: 'POST',
      headers: { apikey: stack.anonKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ refresh_token: user.refreshToken }),
    }).then((r) => r.json() as Promise<{ access_token: string }>);
    expect((await api('GET', '/collections/', { token: refreshed.access_token })).status).toBe(200);

    const { body: collection } = await api('POST', '/collections/', { token: user.token, body: { name: 'Mine' } });
    expect((await api('GET', `/collections/${collection.id}/config`, { token: user.token })).status).toBe(403);
    const admin = await makeAdmin(user);
    expect((await api('GET', `/collections/${collection.id}/config`, { token: admin.token })).status).toBe(200);
  });

  it('refuses a token whose sub is not a user id, and one without exp', async () => {
    const noUuid = await mintToken({ sub: 'service-account' });
    expect((await api('GET', '/collections/', { token: noUuid })).body.detail).toBe('Invalid token');
    const user = await signUp('noexp');
    const { SignJWT, importJWK } = await import('jose');
    const key = await importJWK(JSON.parse(stack.privateJwk), 'ES256');
    const noExp = await new SignJWT({ sub: user.id, aud: 'authenticated', iss: stack.issuer })
      .setProtectedHeader({ alg: 'ES256', kid: 'test-key-1' })
      .sign(key);
    expect((await api('GET', '/collections/', { token: noExp })).body.detail).toBe('Invalid token');
  });

  it('refuses a token from another issuer, and one that names none', async () => {
    const user = await signUp('issuer');
    const foreign = await mintToken({ sub: user.id, iss: 'https://evil.example/auth/v1' });
    expect((await api('GET', '/collections/', { token: foreign })).body.detail).toBe('Invalid token');
    const noIssuer = await mintToken({ sub: user.id, iss: undefined });
    expect(JSON.parse(Buffer.from(noIssuer.split('.')[1] as string, 'base64url').toString())).not.toHaveProperty('iss');
    expect((await api('GET', '/collections/', { token: noIssuer })).body.detail).toBe('Invalid token');
  });

  it('refuses an anonymous sign-in (403) unless the deployment allows them; a signed-up user’s token passes', async () => {
    const user = await signUp('anonymous');
    const anonymous = await mintToken({ sub: user.id, is_anonymous: true, email: '' });
    const refused = await api('GET', '/collections/', { token: anonymous });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      code: 'forbidden',
      detail: 'Anonymous sign-ins cannot use this service: sign in with an email address',
    });
    // A signed-up user's token says is_anonymous: false.
    expect((await api('GET', '/collections/', { token: await mintToken({ sub: user.id, is_anonymous: false }) })).status).toBe(
      200,
    );
    const allowing = await fetch(`${anonymousAllowed.url}/collections/`, { headers: { Authorization: `Bearer ${anonymous}` } });
    expect(allowing.status).toBe(200);
  });
});

let anonymousAllowed: RunningWorker;
beforeAll(async () => {
  anonymousAllowed = await startWorker({
    config: 'wrangler.toml',
    port: await freePort(),
    vars: { ...stack.apiVars, AUTH_ALLOW_ANONYMOUS: 'true' },
    hyperdrive: { HYPERDRIVE: stack.databaseUrl },
    persistTo: join(stack.persistDir, 'anonymous-allowed'),
    quiet: true,
  });
});
afterAll(() => anonymousAllowed?.stop());

describe('when the identity provider or the configuration is broken', () => {
  let unreachable: RunningWorker;
  let misconfigured: RunningWorker;
  let withoutIssuer: RunningWorker;

  beforeAll(async () => {
    const deadPort = await freePort();
    const { AUTH_ISSUER: _issuer, ...noIssuer } = stack.apiVars;
    [unreachable, misconfigured, withoutIssuer] = await Promise.all([
      startWorker({
        config: 'wrangler.toml',
        port: await freePort(),
        vars: { ...stack.apiVars, AUTH_JWKS_URL: `http://127.0.0.1:${deadPort}/auth/v1/.well-known/jwks.json` },
        hyperdrive: { HYPERDRIVE: stack.databaseUrl },
        persistTo: join(stack.persistDir, 'unreachable'),
        quiet: true,
      }),
      startWorker({
        config: 'wrangler.toml',
        port: await freePort(),
        vars: { ...stack.apiVars, AUTH_JWKS_URL: 'not a url' },
        hyperdrive: { HYPERDRIVE: stack.databaseUrl },
        persistTo: join(stack.persistDir, 'misconfigured'),
        quiet: true,
      }),
      startWorker({
        config: 'wrangler.toml',
        port: await freePort(),
        vars: noIssuer,
        hyperdrive: { HYPERDRIVE: stack.databaseUrl },
        persistTo: join(stack.persistDir, 'without-issuer'),
        quiet: true,
      }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([unreachable?.stop(), misconfigured?.stop(), withoutIssuer?.stop()]);
  });

  it('answers 503 when the JWKS cannot be fetched on a cold cache', async () => {
    const user = await signUp('cold');
    const response = await fetch(`${unreachable.url}/collections/`, { headers: { Authorization: `Bearer ${user.token}` } });
    expect(response.status).toBe(503);
    const body = (await response.json()) as { detail: string; code: string };
    expect(body.code).toBe('service_unavailable');
    expect(body.detail).toMatch(/identity provider/);
  });

  it('names the bad setting, not a stack trace', async () => {
    const user = await signUp('misconfig');
    const response = await fetch(`${misconfigured.url}/collections/`, { headers: { Authorization: `Bearer ${user.token}` } });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ code: 'misconfigured', detail: expect.stringContaining('AUTH_JWKS_URL') });
    expect(text).not.toMatch(/at \w+ \(|\.ts:\d+/);
  });

  it('will not run without AUTH_ISSUER: a token from any issuer would do', async () => {
    const user = await signUp('no-issuer');
    const response = await fetch(`${withoutIssuer.url}/collections/`, { headers: { Authorization: `Bearer ${user.token}` } });
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ code: 'misconfigured', detail: expect.stringContaining('AUTH_ISSUER') });
  });
});
