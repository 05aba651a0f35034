import { createClient, type Session, type SupabaseClient } from '@supabase/supabase-js';
import { useEffect, useState } from 'preact/hooks';

/** What the API worker tells the browser about where people sign in (GET /app/config.json). */
interface AppConfig {
  supabase_url: string;
  supabase_anon_key: string;
}

let client: SupabaseClient | undefined;

/** Supabase Auth in the browser: it keeps the session in localStorage and refreshes it before it expires. */
export async function startAuth(): Promise<void> {
  const response = await fetch('/app/config.json');
  if (!response.ok) throw new Error('The service could not say where to sign in. Try again in a moment.');
  const config = (await response.json()) as AppConfig;
  client = createClient(config.supabase_url, config.supabase_anon_key, {
    auth: { persistSession: true, autoRefreshToken: true, detectSessionInUrl: false },
  });
}

export function auth(): SupabaseClient['auth'] {
  if (!client) throw new Error('startAuth() has not run');
  return client.auth;
}

/** The current session; undefined until it is known. */
export function useSession(): Session | null | undefined {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  useEffect(() => {
    void auth()
      .getSession()
      .then(({ data }) => setSession(data.session));
    const { data } = auth().onAuthStateChange((_event, next) => setSession(next));
    return () => data.subscription.unsubscribe();
  }, []);
  return session;
}

/** The login page, coming back to `next` (this page by default) once signed in. */
export function loginUrl(next = `${location.pathname}${location.search}`): string {
  return `/login?next=${encodeURIComponent(next)}`;
}
