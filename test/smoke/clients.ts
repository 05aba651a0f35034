import { randomUUID } from 'node:crypto';
import { readQueryStream } from '../../client/index.ts';
import type { Target } from './target.ts';

export interface SmokeUser {
  id: string;
  email: string;
  token: string;
}

export interface Answer<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** The API over HTTP, with a user's bearer token. */
export function apiClient(target: Target) {
  return async function call<T = any>(method: string, path: string, token?: string, body?: unknown): Promise<Answer<T>> {
    const headers: Record<string, string> = {};
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined && !(body instanceof FormData)) headers['Content-Type'] = 'application/json';
    const response = await fetch(`${target.apiUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: response.status, body: parsed as T, headers: response.headers };
  };
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

/** POST /query/ read by the typed client's reader of the stream: the events in order, their data parsed. */
export async function ask(target: Target, token: string, body: Record<string, unknown>) {
  const response = await fetch(`${target.apiUrl}/query/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const events: { event: string; data: any }[] = [];
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    return { status: response.status, events, json: await response.json() };
  }
  for await (const { event, data } of readQueryStream(response.body as ReadableStream<Uint8Array>)) {
    events.push({ event, data });
  }
  return { status: response.status, events };
}
