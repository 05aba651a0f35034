import type { ZodError } from 'zod';
import type { ValidationIssue } from './errors.ts';

const LOCATION: Record<string, string> = { json: 'body', form: 'body', param: 'path', query: 'query', header: 'header' };

/** Zod issues as the `{loc, msg, type}` list that clients of this contract parse. */
export function zodIssues(error: ZodError, target = 'json'): ValidationIssue[] {
  return error.issues.map((issue) => ({
    loc: [LOCATION[target] ?? target, ...issue.path.map((part) => (typeof part === 'number' ? part : String(part)))],
    msg: issue.message,
    type: issue.code === 'invalid_type' && /received undefined/.test(issue.message) ? 'missing' : issue.code,
  }));
}

export const MALFORMED_BODY: ValidationIssue[] = [{ loc: ['body'], msg: 'Request body is not valid JSON', type: 'json_invalid' }];
