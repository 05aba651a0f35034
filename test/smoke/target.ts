import { inject } from 'vitest';

/**
 * Where the smoke suite runs: a deployment named by the environment (`npm run test:deployed`), or
 * the local deployment the vitest global setup started. Only these four are needed: the suite talks
 * to the API and to Supabase Auth over HTTP, as any client does, and never to a database.
 */
export interface Target {
  apiUrl: string;
  supabaseUrl: string;
  anonKey: string;
  /** Creates confirmed users through the Auth admin API, so a project's email confirmation is no obstacle, and deletes them afterwards. */
  serviceRoleKey: string;
}

const SETTINGS = ['RAG_API_URL', 'SUPABASE_URL', 'SUPABASE_ANON_KEY', 'SUPABASE_SERVICE_ROLE_KEY'] as const;

export function target(): Target {
  if (process.env.RAG_API_URL) {
    const missing = SETTINGS.filter((name) => !process.env[name]);
    if (missing.length > 0) throw new Error(`npm run test:deployed needs ${missing.join(', ')} in the environment`);
    const env = process.env as Record<(typeof SETTINGS)[number], string>;
    return {
      apiUrl: env.RAG_API_URL.replace(/\/+$/, ''),
      supabaseUrl: env.SUPABASE_URL.replace(/\/+$/, ''),
      anonKey: env.SUPABASE_ANON_KEY,
      serviceRoleKey: env.SUPABASE_SERVICE_ROLE_KEY,
    };
  }
  const stack = inject('stack');
  if (!stack?.apiUrl)
    throw new Error('No deployment: set RAG_API_URL and the Supabase settings, or run under the pglite project');
  return { apiUrl: stack.apiUrl, supabaseUrl: stack.supabaseUrl, anonKey: stack.anonKey, serviceRoleKey: stack.serviceRoleKey };
}
