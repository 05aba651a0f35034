// Tests that run the API app in process (test/api/upload-limits.test.ts) type-check it under the Node
// config, which cannot load wrangler's runtime types beside Node's; the app only passes its bindings on.
type Env = {};
