import { describe, expectTypeOf, it } from 'vitest';
import type { ErrorBody, ResponseBody, Schema } from '../support/api-call.ts';

// The tests' `api()` types each response by its method and path; these are checked by the type checker (`npm run
// typecheck`), not at run time. A path given as a template literal arrives as `/collections/${string}/…`.
type Refusal = Partial<ErrorBody>;

describe('ResponseBody', () => {
  it('matches a path with parameters to its own operation, not to a longer or shorter one', () => {
    expectTypeOf<ResponseBody<'DELETE', `/collections/${string}`>>().toEqualTypeOf<Schema<'Deleted'> & Refusal>();
    expectTypeOf<ResponseBody<'GET', `/collections/${string}/documents`>>().toEqualTypeOf<Schema<'Document'>[] & Refusal>();
    expectTypeOf<ResponseBody<'GET', `/ingest/jobs/${string}`>>().toEqualTypeOf<Schema<'IngestJob'> & Refusal>();
  });

  it('reads past a query string and a trailing slash', () => {
    expectTypeOf<ResponseBody<'GET', '/collections/'>>().toEqualTypeOf<Schema<'ListedCollection'>[] & Refusal>();
    expectTypeOf<ResponseBody<'GET', `/ingest/jobs?collection_id=${string}`>>().toEqualTypeOf<Schema<'IngestJob'>[] & Refusal>();
  });

  it('is unknown for a method the path does not have, a page, or a path only known at run time', () => {
    expectTypeOf<ResponseBody<'PUT', '/collections/'>>().toBeUnknown();
    expectTypeOf<ResponseBody<'GET', '/app/'>>().toBeUnknown();
    expectTypeOf<ResponseBody<'GET', string>>().toBeUnknown();
  });
});
