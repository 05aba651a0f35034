import type { Context } from 'hono';
import type { z } from 'zod';
import { invalidRequest } from './errors.ts';

/** Parses a JSON body against a schema, turning the first problem into OpenAI's 400 with the offending param. */
export async function parseBody<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw invalidRequest('We could not parse the JSON body of your request. Expected a JSON object.');
  }
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = deepest(parsed.error.issues);
  const param = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : null;
  throw invalidRequest(param ? `Invalid '${param}': ${issue?.message}` : (issue?.message ?? 'Invalid request body'), param);
}

type Issue = z.core.$ZodIssue;
type Located = { path: PropertyKey[]; message: string };

/**
 * A union's own issue only says "Invalid input"; the branch that got furthest into the value (a content
 * array rather than a string, say) says what is actually wrong, so that one is reported. Branch issues
 * have paths relative to the union, hence the prefix.
 */
function deepest(issues: readonly Issue[], prefix: PropertyKey[] = []): Located | undefined {
  let best: Located | undefined;
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    let candidate: Located = { path, message: issue.message };
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      const branches = issue.errors.map((branch) => deepest(branch, path)).filter((i): i is Located => i !== undefined);
      const inner = branches.reduce<Located | undefined>((a, b) => (!a || b.path.length > a.path.length ? b : a), undefined);
      if (inner && inner.path.length > path.length) candidate = inner;
    }
    if (!best || candidate.path.length > best.path.length) best = candidate;
  }
  return best;
}
