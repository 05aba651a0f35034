import { createApp } from './app.ts';

// Built once per isolate; per-request state (database client, caller) lives on the context.
const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
