/**
 * The typed client from sign-in to a cited answer, as a program uses it:
 * sign in → create a collection → create an API key for it → upload a file with the key → wait for its job →
 * ask with the key, printing the answer as it streams and then its sources.
 *
 *   RAG_API_URL=http://127.0.0.1:8787 SUPABASE_URL=http://127.0.0.1:54321 SUPABASE_ANON_KEY=… \
 *   RAG_EMAIL=you@example.com RAG_PASSWORD=… npx tsx client/example.ts [file] [question]
 *
 * (`npm run dev` prints the URLs and the anon key; sign up in the web app first.)
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { ask, createRagClient, type RagClient, type Source, uploadFile } from './index.ts';

export interface ExampleOptions {
  apiUrl: string;
  supabaseUrl: string;
  anonKey: string;
  email: string;
  password: string;
  /** The document to upload; default test/fixtures/docs/handbook-1p.docx. */
  file?: string;
  question?: string;
  /** Where the answer goes as it streams, then its sources; default stdout. */
  write?: (text: string) => void;
}

const DEFAULT_FILE = new URL('../test/fixtures/docs/handbook-1p.docx', import.meta.url).pathname;
const DEFAULT_QUESTION = 'Who appoints and supervises standing trustees?';

export async function runExample(options: ExampleOptions) {
  const write = options.write ?? ((text: string) => process.stdout.write(text));

  // 1. A person signs in (Supabase Auth's password grant) and, with that token, makes a collection and a key for it.
  const user = createRagClient({ baseUrl: options.apiUrl, token: await signIn(options) });
  const collection = dataOf(await user.POST('/collections', { body: { name: 'Client example' } }));
  const key = dataOf(
    await user.POST('/keys', {
      body: { name: 'client example', scopes: ['ingest', 'query'], collection_id: collection.id },
    }),
  );

  // 2. The program uses the key from here on: upload, then poll the job until it ends.
  const rag = createRagClient({ baseUrl: options.apiUrl, apiKey: key.key });
  const path = options.file ?? DEFAULT_FILE;
  const file = new Blob([await readFile(path)]);
  const { job_id } = dataOf(await uploadFile(rag, { file, fileName: basename(path), collection_id: collection.id }));
  const job = await waitForJob(rag, job_id);
  if (job.status === 'failed') throw new Error(`Ingestion failed: ${job.error_message}`);

  // 3. Ask. The sources come first, then the answer piece by piece; it cites them as [n].
  const asked = await ask(rag, { question: options.question ?? DEFAULT_QUESTION, collection_id: collection.id });
  if (asked.error) throw new Error(`POST /query/ answered ${asked.response.status}: ${JSON.stringify(asked.error)}`);
  let answer = '';
  let sources: Source[] = [];
  for await (const { event, data } of asked.data) {
    if (event === 'metadata') sources = data.sources;
    if (event === 'token') {
      answer += data.token;
      write(data.token);
    }
    if (event === 'error') throw new Error(data.message);
  }
  write('\n\nSources:\n');
  for (const [i, { source, page }] of sources.entries()) write(`[${i + 1}] ${source}${page === null ? '' : `, page ${page}`}\n`);
  return { collectionId: collection.id, jobId: job_id, answer, sources };
}

async function signIn({ supabaseUrl, anonKey, email, password }: ExampleOptions): Promise<string> {
  const response = await fetch(`${supabaseUrl}/auth/v1/token?grant_type=password`, {
    method: 'POST',
    headers: { apikey: anonKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`Sign-in failed: ${response.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

async function waitForJob(rag: RagClient, jobId: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = dataOf(await rag.GET('/ingest/jobs/{job_id}', { params: { path: { job_id: jobId } } }));
    if (job.status !== 'queued' && job.status !== 'processing') return job;
    if (Date.now() > deadline) throw new Error(`Job ${jobId} still ${job.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** A call's `data`, or an Error naming its status and the API's `{detail, code}`. */
function dataOf<T>({ data, error, response }: { data?: T; error?: unknown; response: Response }): T {
  if (data === undefined) throw new Error(`${response.url} answered ${response.status}: ${JSON.stringify(error)}`);
  return data;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const env = (name: string) => {
    const value = process.env[name];
    if (!value) throw new Error(`Set ${name} (see the comment at the top of client/example.ts)`);
    return value;
  };
  await runExample({
    apiUrl: env('RAG_API_URL'),
    supabaseUrl: env('SUPABASE_URL'),
    anonKey: env('SUPABASE_ANON_KEY'),
    email: env('RAG_EMAIL'),
    password: env('RAG_PASSWORD'),
    file: process.argv[2],
    question: process.argv[3],
  });
}
