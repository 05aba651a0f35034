import { createServer, type Server } from 'node:http';

/**
 * The few Cloudflare API routes that `npm run deploy -- --check` reaches through wrangler (Hyperdrive
 * config, a Worker's secrets, the bulk secrets patch), on loopback. wrangler is pointed at it with
 * CLOUDFLARE_API_BASE_URL, so what the tests read is what the real wrangler prints for each answer.
 * The bodies follow the API's envelope ({ success, errors, messages, result }).
 */
export interface FakeCloudflareApi {
  /** CLOUDFLARE_API_BASE_URL for wrangler. */
  baseUrl: string;
  /** Hyperdrive configs by id; `caching` as the API returns it (absent when undefined). */
  hyperdrive: Map<string, { name: string; caching?: Record<string, unknown> }>;
  /** Secret names by Worker name; a Worker missing here does not exist yet. */
  secrets: Map<string, string[]>;
  /** Every request, as "METHOD path". */
  requests: string[];
  stop(): Promise<void>;
}

export const FAKE_ACCOUNT_ID = 'fa4e0000000000000000000000000000';

export async function startFakeCloudflareApi(): Promise<FakeCloudflareApi> {
  const hyperdrive: FakeCloudflareApi['hyperdrive'] = new Map();
  const secrets: FakeCloudflareApi['secrets'] = new Map();
  const requests: string[] = [];
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    requests.push(`${request.method} ${path}`);
    const send = (status: number, result: unknown, errors: { code: number; message: string }[] = []) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ success: status < 400, errors, messages: [], result }));
    };
    const account = `/client/v4/accounts/${FAKE_ACCOUNT_ID}`;

    const config = new RegExp(`^${account}/hyperdrive/configs/([^/]+)$`).exec(path);
    if (config && request.method === 'GET') {
      const id = config[1] as string;
      const found = hyperdrive.get(id);
      if (!found) return send(404, null, [{ code: 2008, message: 'hyperdrive config not found' }]);
      return send(200, {
        id,
        name: found.name,
        origin: { scheme: 'postgres', host: 'db.project-ref.supabase.co', port: 5432, database: 'postgres', user: 'postgres' },
        ...(found.caching ? { caching: found.caching } : {}),
        created_on: '2026-11-20T10:00:00.000000Z',
        modified_on: '2026-11-20T10:00:00.000000Z',
        origin_connection_limit: 20,
      });
    }

    const script = new RegExp(`^${account}/workers/scripts/([^/]+)/(secrets|secrets-bulk)$`).exec(path);
    if (script) {
      const name = script[1] as string;
      const existing = secrets.get(name);
      if (!existing) return send(404, null, [{ code: 10007, message: 'This Worker does not exist on your account.' }]);
      if (script[2] === 'secrets' && request.method === 'GET') {
        return send(
          200,
          existing.map((secret) => ({ name: secret, type: 'secret_text' })),
        );
      }
      if (script[2] === 'secrets-bulk' && request.method === 'PATCH') {
        const patch = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { secrets: Record<string, unknown> };
        const kept = existing.filter((secret) => patch.secrets[secret] !== null);
        const added = Object.entries(patch.secrets).flatMap(([key, value]) =>
          value !== null && !kept.includes(key) ? [key] : [],
        );
        secrets.set(name, [...kept, ...added]);
        return send(200, null);
      }
    }
    send(404, null, [{ code: 7003, message: 'Could not route to this path' }]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    baseUrl: `http://127.0.0.1:${port}/client/v4`,
    hyperdrive,
    secrets,
    requests,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
