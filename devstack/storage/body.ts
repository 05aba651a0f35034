import type { Context } from 'hono';
import { invalidRequest } from './errors.ts';

export type JsonBody = Record<string, unknown>;

/** The JSON object body; Storage's schema validation answers anything else with InvalidRequest. */
export async function readJsonBody(c: Context): Promise<JsonBody> {
  let value: unknown;
  try {
    const text = await c.req.text();
    value = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    throw invalidRequest('Body is not valid JSON');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalidRequest('body must be object');
  return value as JsonBody;
}

// Messages follow the schema validator Storage uses: "body/<field> must be ...".
export function requiredString(body: JsonBody, field: string): string {
  const value = body[field];
  if (value === undefined) throw invalidRequest(`body must have required property '${field}'`);
  if (typeof value !== 'string') throw invalidRequest(`body/${field} must be string`);
  return value;
}

export function optionalString(body: JsonBody, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidRequest(`body/${field} must be string`);
  return value;
}

export function optionalBoolean(body: JsonBody, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalidRequest(`body/${field} must be boolean`);
  return value;
}

export function integerField(body: JsonBody, field: string, options: { minimum: number; fallback?: number }): number {
  const value = body[field] ?? options.fallback;
  if (value === undefined) throw invalidRequest(`body must have required property '${field}'`);
  if (typeof value !== 'number' || !Number.isInteger(value)) throw invalidRequest(`body/${field} must be integer`);
  if (value < options.minimum) throw invalidRequest(`body/${field} must be >= ${options.minimum}`);
  return value;
}

export function stringArray(body: JsonBody, field: string): string[] {
  const value = body[field];
  if (value === undefined) throw invalidRequest(`body must have required property '${field}'`);
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    throw invalidRequest(`body/${field} must be array of strings`);
  }
  if (value.length === 0) throw invalidRequest(`body/${field} must NOT have fewer than 1 items`);
  return value as string[];
}
