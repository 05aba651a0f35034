import { randomUUID } from 'node:crypto';
import { ask as askQuestion, createRagClient, type QueryEvent, type QueryRequest } from '../../client/index.ts';
import { callApi, type Method } from '../support/api-call.ts';
import type { Target } from './target.ts';

export interface SmokeUser {
  id: string;
  email: string;
  token: string;
}

/** The API over HTTP, with a user's bearer token; the body typed by the description, as the tests' `api` types it. */
export function apiClient(target: Target) {
  return <M extends Method, P extends string>(method: M, path: P, token?: string, body?: unknown) =>
    callApi(target.apiUrl, method, path, { token: token || undefined, body });
}

/** Confirmed users made and removed through the Auth admin API, signed in with the password grant. */
export function users(target: Target) {
  const password = `smoke-${randomUUID()}`;
  const admin = {
    apikey: target.serviceRoleKey,
    Authorization: `Bearer ${target.serviceRoleKey}`,
    'Content-Type': 'application/json',
  };
  const made: string[] = [];
  return {
    async create(label: string): Promise<SmokeUser> {
      const email = `smoke-${label}-${randomUUID().slice(0, 8)}@example.com`;
      const created = await fetch(`${target.supabaseUrl}/auth/v1/admin/users`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ email, password, email_confirm: true }),
      });
      const user = (await created.json()) as { id?: string };
      if (!created.ok || !user.id) throw new Error(`creating a user failed: ${created.status} ${JSON.stringify(user)}`);
      made.push(user.id);
      const signIn = await fetch(`${target.supabaseUrl}/auth/v1/token?grant_type=password`, {
        method: 'POST',
        headers: { apikey: target.anonKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      const session = (await signIn.json()) as { access_token?: string };
      if (!signIn.ok || !session.access_token) throw new Error(`sign-in failed: ${signIn.status}`);
      return { id: user.id, email, token: session.access_token };
    },
    async removeAll(): Promise<void> {
      for (const id of made.splice(0)) {
        await fetch(`${target.supabaseUrl}/auth/v1/admin/users/${id}`, { method: 'DELETE', headers: admin });
      }
    },
  };
}

/** POST /query/ through the typed client: the events in order, their data parsed, or the refusal. */
export async function ask(target: Target, token: string, body: QueryRequest) {
  const asked = await askQuestion(createRagClient({ baseUrl: target.apiUrl, token }), body);
  const events: QueryEvent[] = [];
  if (asked.error) return { status: asked.response.status, events, json: asked.error };
  for await (const event of asked.data) events.push(event);
  return { status: asked.response.status, events };
}
