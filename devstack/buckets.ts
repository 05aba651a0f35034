import { readFileSync } from 'node:fs';
import { parse } from 'smol-toml';

/** A bucket as supabase/config.toml declares it: the same file configures a hosted project. */
export interface DeclaredBucket {
  id: string;
  public: boolean;
  fileSizeLimit?: number;
}

const UNITS: Record<string, number> = { B: 1, KB: 1e3, MB: 1e6, GB: 1e9, KIB: 1024, MIB: 1024 ** 2, GIB: 1024 ** 3 };

/** "50MiB" → bytes, as the Supabase CLI reads `file_size_limit`. */
export function parseSize(value: string | number): number {
  if (typeof value === 'number') return value;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const factor = UNITS[(match?.[2] || 'B').toUpperCase()];
  if (!match || factor === undefined) throw new Error(`supabase/config.toml: cannot read the size ${JSON.stringify(value)}`);
  return Math.round(Number(match[1]) * factor);
}

export function declaredBuckets(configPath: string): DeclaredBucket[] {
  const config = parse(readFileSync(configPath, 'utf8')) as {
    storage?: { buckets?: Record<string, { public?: boolean; file_size_limit?: string | number }> };
  };
  return Object.entries(config.storage?.buckets ?? {}).map(([id, bucket]) => ({
    id,
    public: bucket.public ?? false,
    ...(bucket.file_size_limit === undefined ? {} : { fileSizeLimit: parseSize(bucket.file_size_limit) }),
  }));
}

/** What `supabase start` does for each declared bucket; one that exists already is left as it is. */
export async function ensureBuckets(supabaseUrl: string, serviceRoleKey: string, buckets: DeclaredBucket[]) {
  for (const bucket of buckets) {
    const response = await fetch(`${supabaseUrl}/storage/v1/bucket`, {
      method: 'POST',
      headers: { apikey: serviceRoleKey, authorization: `Bearer ${serviceRoleKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: bucket.id, name: bucket.id, public: bucket.public, file_size_limit: bucket.fileSizeLimit }),
    });
    if (response.ok) continue;
    // Like the real API, Storage answers "already exists" as a 400 whose body says 409.
    const body = (await response.json().catch(() => ({}))) as { statusCode?: string };
    if (body.statusCode !== '409')
      throw new Error(`could not create the storage bucket ${bucket.id}: ${response.status} ${JSON.stringify(body)}`);
  }
}
