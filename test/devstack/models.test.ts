import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { serve } from '@hono/node-server';
import { APICallError, embedMany, generateText, streamText } from 'ai';
import { Hono } from 'hono';
import { getDocumentProxy, getResolvedPDFJS } from 'unpdf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageInputTokens, sniffImage } from '../../devstack/models/images.ts';
import { cleanOcrText } from '../../devstack/models/ocr-engine.ts';
import { type ChatMessage, createModelServer, type ModelServer, type TextEngine } from '../../devstack/models/server.ts';
import { freePort } from '../../devstack/ports.ts';
import { encodePng } from '../../workers/ingest/src/parsers/png.ts';
import { DOCS_DIR, fixture } from '../support/documents.ts';
import { characterErrorRate } from '../support/ocr.ts';
import {
  TINY_DIMENSION,
  TINY_MAX_LENGTH,
  tempDirWithTinyModel,
  tinyExpectedEmbedding,
  tinyTokenIds,
  writeTinyEmbeddingModel,
} from './tiny-embedding-model.ts';

const apiKey = 'sk-devstack-test-key';
// Measured 0.010 with the full page (Tesseract eng 4.0.0_best_int, automatic page segmentation); the bound
// leaves room for other CPUs' float rounding, and fails if columns get interleaved again (that read 0.38).
const MAX_CER = 0.03;

interface Running {
  server: ModelServer;
  baseURL: string;
  origin: string;
  logs: string[];
  close(): Promise<void>;
}

let tmp: string;
/** The tiny embedding model's folder, in tmp. */
let tinyModel: string;

/** Mounts the model server at /openai like the devstack does, plus a loopback file route for image URLs. */
async function start(options: Partial<Parameters<typeof createModelServer>[0]> = {}, files: Record<string, Uint8Array> = {}) {
  const logs: string[] = [];
  const server = await createModelServer({
    apiKey,
    cacheDir: join(tmp, 'cache'),
    sharedModelsDir: join(tmp, 'no-shared-models'),
    log: (line) => logs.push(line),
    ...options,
  });
  const app = new Hono();
  app.route('/openai', server.app);
  app.get('/files/:name', (c) => {
    const body = files[c.req.param('name')];
    return body ? c.body(body.slice().buffer, 200, { 'content-type': 'image/png' }) : c.notFound();
  });
  const port = await freePort();
  const http = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port }, () => resolve(s));
  });
  const origin = `http://127.0.0.1:${port}`;
  return {
    server,
    baseURL: `${origin}/openai/v1`,
    origin,
    logs,
    close: async () => {
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await server.close();
    },
  } satisfies Running;
}

/** Runs `use` against a model server of its own, which is closed however `use` ends. */
async function withServer(options: Parameters<typeof start>[0], use: (stack: Running) => Promise<void>): Promise<void> {
  const stack = await start(options);
  try {
    await use(stack);
  } finally {
    await stack.close();
  }
}

/** The tiny model written to `name` under the test folder, with `files` (paths inside the model) added or replaced. */
async function tinyModelWith(name: string, files: Record<string, string> = {}): Promise<string> {
  const dir = join(tmp, name);
  await writeTinyEmbeddingModel(dir);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

async function post(base: string, path: string, body: unknown, key: string | null = apiKey) {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === null ? {} : { authorization: `Bearer ${key}` }) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json, headers: response.headers };
}

/** The scanned page's only image, as 8-bit gray pixels (the PDF stores it as a 1-bit JBIG2 image). */
async function scannedPage(): Promise<{ gray: Uint8Array; width: number; height: number }> {
  const pdf = await getDocumentProxy(fixture('scan-linn-2col.pdf'));
  const page = await pdf.getPage(1);
  const { OPS } = await getResolvedPDFJS();
  const ops = await page.getOperatorList();
  const at = ops.fnArray.indexOf(OPS.paintImageXObject);
  if (at < 0) throw new Error('the scan has no image');
  const key = ops.argsArray[at][0] as string;
  const image: { width: number; height: number; kind: number; data: Uint8Array } = await new Promise((resolve) =>
    page.objs.get(key, resolve),
  );
  const { width, height, kind, data } = image;
  const gray = new Uint8Array(width * height);
  if (kind === 1) {
    // pdf.js GRAYSCALE_1BPP: rows padded to whole bytes, a set bit is white.
    const rowBytes = Math.ceil(width / 8);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++)
        gray[y * width + x] = ((data[y * rowBytes + (x >> 3)] as number) >> (7 - (x & 7))) & 1 ? 255 : 0;
    }
  } else {
    const channels = kind === 2 ? 3 : 4;
    for (let i = 0; i < width * height; i++) gray[i] = data[i * channels] as number;
  }
  await pdf.destroy();
  return { gray, width, height };
}

function sseEvents(text: string): string[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim().length > 0)
    .map((block) => {
      expect(block.startsWith('data: ')).toBe(true);
      return block.slice('data: '.length);
    });
}

const pngDataUrl = (png: Uint8Array) => `data:image/png;base64,${Buffer.from(png).toString('base64')}`;

let page: { gray: Uint8Array; width: number; height: number };
let pagePng: Uint8Array;
/** The page's title lines only: small enough to OCR in a second. */
let titlePng: Uint8Array;
let withModel: Running;

beforeAll(async () => {
  ({ dir: tmp, model: tinyModel } = await tempDirWithTinyModel('models-test-'));
  page = await scannedPage();
  pagePng = encodePng(page.gray, page.width, page.height, 1);
  const titleRows = 340;
  titlePng = encodePng(page.gray.subarray(0, page.width * titleRows), page.width, titleRows, 1);
  withModel = await start({ embeddingModel: tinyModel }, { 'title.png': titlePng });
});

afterAll(async () => {
  await withModel?.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('auth and discovery', () => {
  it('answers 401 in OpenAI shape without a key or with a wrong one', async () => {
    const missing = await post(withModel.baseURL, '/embeddings', { model: 'tiny-minilm', input: 'cat' }, null);
    expect(missing.status).toBe(401);
    expect(missing.json.error.message).toMatch(/didn't provide an API key/);
    const wrong = await post(withModel.baseURL, '/chat/completions', { model: 'devstack-ocr', messages: [] }, 'sk-wrong');
    expect(wrong.status).toBe(401);
    expect(wrong.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key' });

    const openai = createOpenAI({ baseURL: withModel.baseURL, apiKey: 'sk-wrong' });
    const failure = await embedMany({ model: openai.embedding('tiny-minilm'), values: ['cat'], maxRetries: 0 }).catch((e) => e);
    expect(APICallError.isInstance(failure)).toBe(true);
    expect(failure.statusCode).toBe(401);
  });

  it('lists the models it serves and answers unknown paths with an OpenAI 404', async () => {
    const response = await fetch(`${withModel.baseURL}/models`, { headers: { authorization: `Bearer ${apiKey}` } });
    const body = await response.json();
    expect(body.object).toBe('list');
    expect(body.data.map((m: { id: string }) => m.id)).toEqual(['tiny-minilm', 'devstack-ocr', 'devstack-extractive']);
    expect(withModel.server.models).toEqual({ embedding: 'tiny-minilm', vision: 'devstack-ocr', text: 'devstack-extractive' });
    const get = (path: string) => fetch(`${withModel.baseURL}${path}`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(await (await get('/models/devstack-ocr')).json()).toMatchObject({ id: 'devstack-ocr', object: 'model' });
    const missing = await get('/models/gpt-4o');
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe('model_not_found');
    const unknown = await post(withModel.baseURL, '/completions', { model: 'x', prompt: 'hi' });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.message).toMatch(/Unknown request URL/);
  });
});

describe('embeddings', () => {
  it('loads a model directory with remote loading off and reports its dimension', () => {
    expect(withModel.server.embeddings).toEqual({ model: 'tiny-minilm', dimension: TINY_DIMENSION });
    expect(withModel.server.embeddingsUnavailableReason).toBeUndefined();
    expect(withModel.logs.some((l) => /embeddings from tiny-minilm \(fp32, mean pooling, 8 dimensions\)/.test(l))).toBe(true);
  });

  it('returns the mean-pooled, normalised vectors the model computes, through the AI SDK', async () => {
    const openai = createOpenAI({ baseURL: withModel.baseURL, apiKey });
    const values = ['The cat sat on the mat.', 'dogs ran in a park', 'cat'];
    const result = await embedMany({ model: openai.embedding('tiny-minilm'), values, maxRetries: 0 });
    const expected = [
      tinyExpectedEmbedding(tinyTokenIds(['the', 'cat', 'sat', 'on', 'the', 'mat', '.'])),
      tinyExpectedEmbedding(tinyTokenIds(['dog', '##s', 'ran', 'in', 'a', 'park'])),
      tinyExpectedEmbedding(tinyTokenIds(['cat'])),
    ];
    expect(result.embeddings).toHaveLength(3);
    for (const [i, vector] of result.embeddings.entries()) {
      expect(vector).toHaveLength(TINY_DIMENSION);
      expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
      for (const [j, v] of vector.entries()) expect(v).toBeCloseTo(expected[i]?.[j] as number, 5);
    }
    // [CLS] and [SEP] count: 9 + 8 + 3 tokens.
    expect(result.usage.tokens).toBe(20);
  });

  it('truncates long inputs to the model limit and batches beyond one batch', async () => {
    const words = Array.from({ length: 40 }, (_, i) => (i % 2 ? 'cat' : 'dog'));
    const values = Array.from({ length: 70 }, (_, i) => (i === 69 ? words.join(' ') : `cat ${i % 2 ? 'dog' : 'mat'}`));
    const response = await post(withModel.baseURL, '/embeddings', { model: 'tiny-minilm', input: values });
    expect(response.status).toBe(200);
    expect(response.json.data).toHaveLength(70);
    expect(response.json.data.map((d: { index: number }) => d.index)).toEqual(values.map((_, i) => i));
    const long = response.json.data[69].embedding as number[];
    const expected = tinyExpectedEmbedding(tinyTokenIds(words.slice(0, TINY_MAX_LENGTH - 2)));
    for (const [j, v] of long.entries()) expect(v).toBeCloseTo(expected[j] as number, 5);
    expect(response.json.data[1].embedding).toEqual(response.json.data[3].embedding);
    expect(response.json.data[0].embedding).not.toEqual(response.json.data[1].embedding);
  });

  it('encodes base64 as little-endian float32', async () => {
    const floats = await post(withModel.baseURL, '/embeddings', { model: 'tiny-minilm', input: 'the mat' });
    const packed = await post(withModel.baseURL, '/embeddings', {
      model: 'tiny-minilm',
      input: 'the mat',
      encoding_format: 'base64',
    });
    expect(packed.status).toBe(200);
    const bytes = Buffer.from(packed.json.data[0].embedding as string, 'base64');
    const decoded = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
    expect(decoded).toEqual(floats.json.data[0].embedding);
    expect(floats.json).toMatchObject({ object: 'list', model: 'tiny-minilm', usage: { prompt_tokens: 4, total_tokens: 4 } });
  });

  it('refuses bad requests with 400 or 404 and the parameter at fault', async () => {
    const cases: [unknown, number, string | null][] = [
      [{ model: 'text-embedding-3-small', input: 'cat' }, 404, 'model'],
      [{ model: 'tiny-minilm', input: ['cat', ''] }, 400, 'input'],
      [{ model: 'tiny-minilm', input: [101, 102] }, 400, 'input'],
      [{ model: 'tiny-minilm', input: 'cat', dimensions: 4 }, 400, 'dimensions'],
      [{ model: 'tiny-minilm', input: 'cat', encoding_format: 'int8' }, 400, 'encoding_format'],
      [{ model: 'tiny-minilm' }, 400, 'input'],
      ['{not json', 400, null],
    ];
    for (const [body, status, param] of cases) {
      const response = await post(withModel.baseURL, '/embeddings', body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect(response.json.error.param).toBe(param);
      expect(response.json.error.message.length).toBeGreaterThan(0);
      expect(response.json.data).toBeUndefined();
    }
  });
});

describe('embeddings without a model', () => {
  it('logs one clear line, reports why, and answers 503 with no vector', async () => {
    const started = Date.now();
    // No shared model and an empty cache: the default hub id must be given up on without any network access.
    await withServer({ embeddingModel: null }, async (stack) => {
      expect(Date.now() - started).toBeLessThan(5000);
      expect(stack.server.embeddings).toBeNull();
      expect(stack.server.embeddingsUnavailableReason).toMatch(/Xenova\/bge-small-en-v1\.5 is not in the cache/);
      const lines = stack.logs.filter((l) => l.includes('dense embeddings unavailable'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^dense embeddings unavailable: .+; retrieval will use sparse vectors only$/);

      const response = await post(stack.baseURL, '/embeddings', { model: 'anything', input: ['cat'] });
      expect(response.status).toBe(503);
      expect(response.json.error).toMatchObject({ type: 'service_unavailable', code: 'embeddings_unavailable' });
      expect(response.json.data).toBeUndefined();
      expect(response.text).not.toMatch(/embedding"\s*:/);

      const openai = createOpenAI({ baseURL: stack.baseURL, apiKey });
      const failure = await embedMany({ model: openai.embedding('x'), values: ['cat'], maxRetries: 0 }).catch((e) => e);
      expect(APICallError.isInstance(failure)).toBe(true);
      expect(failure.statusCode).toBe(503);
    });
  });

  it('says why a model directory that cannot be loaded is unusable', async () => {
    const broken = await tinyModelWith('broken-model', { 'onnx/model.onnx': 'not an onnx graph' });
    await withServer({ embeddingModel: broken }, async (stack) => {
      expect(stack.server.embeddings).toBeNull();
      expect(stack.server.embeddingsUnavailableReason).toMatch(/^loading .*broken-model failed: /);
      expect(stack.logs.filter((l) => l.startsWith('dense embeddings unavailable: loading'))).toHaveLength(1);
      const response = await post(stack.baseURL, '/embeddings', { model: 'broken-model', input: 'cat' });
      expect(response.status).toBe(503);
    });
  });

  it('follows the sentence-transformers pooling and length settings in the model directory', async () => {
    const short = await tinyModelWith('short-model', { 'sentence_bert_config.json': JSON.stringify({ max_seq_length: 6 }) });
    const cls = await tinyModelWith('cls-model', {
      '1_Pooling/config.json': JSON.stringify({ pooling_mode_cls_token: true, pooling_mode_mean_tokens: false }),
    });
    const words = ['the', 'cat', 'sat', 'on', 'the', 'mat'];
    for (const [dir, expected] of [
      [short, tinyExpectedEmbedding(tinyTokenIds(words.slice(0, 4)))],
      [cls, tinyExpectedEmbedding([], { cls: true })],
    ] as const) {
      await withServer({ embeddingModel: dir }, async (stack) => {
        const response = await post(stack.baseURL, '/embeddings', {
          model: stack.server.models.embedding,
          input: words.join(' '),
        });
        const vector = response.json.data[0].embedding as number[];
        for (const [j, v] of vector.entries()) expect(v).toBeCloseTo(expected[j] as number, 5);
      });
    }
  });

  it('picks the first embedding model under the shared models directory', async () => {
    await tinyModelWith('shared-models/b-encoder');
    await tinyModelWith('shared-models/a-generator', {
      'config.json': JSON.stringify({ model_type: 'gpt2', architectures: ['GPT2LMHeadModel'] }),
    });
    // A cross-encoder (the reranker shared/weights ships) scores pairs; it is never taken for the embedder.
    await tinyModelWith('shared-models/a-reranker', {
      'config.json': JSON.stringify({ model_type: 'bert', architectures: ['BertForSequenceClassification'] }),
    });
    await withServer({ embeddingModel: null, sharedModelsDir: join(tmp, 'shared-models') }, async (stack) => {
      expect(stack.server.embeddings).toEqual({ model: 'b-encoder', dimension: TINY_DIMENSION });
    });
  });

  it('prefers bge-small-en-v1.5 under the shared models directory, and takes another by its bare name', async () => {
    await tinyModelWith('shared-default/all-MiniLM-L6-v2', { '1_Pooling/config.json': '{"pooling_mode_mean_tokens":true}' });
    await tinyModelWith('shared-default/bge-small-en-v1.5', { '1_Pooling/config.json': '{"pooling_mode_cls_token":true}' });
    const sharedModelsDir = join(tmp, 'shared-default');
    await withServer({ embeddingModel: null, sharedModelsDir }, async (stack) => {
      expect(stack.server.embeddings).toEqual({ model: 'bge-small-en-v1.5', dimension: TINY_DIMENSION });
      expect(stack.logs.some((line) => line.includes('bge-small-en-v1.5 (fp32, cls pooling'))).toBe(true);
    });
    await withServer({ embeddingModel: 'all-MiniLM-L6-v2', sharedModelsDir }, async (stack) => {
      expect(stack.server.embeddings).toEqual({ model: 'all-MiniLM-L6-v2', dimension: TINY_DIMENSION });
    });
    await withServer({ embeddingModel: 'no-such-model', sharedModelsDir }, async (stack) => {
      expect(stack.server.embeddings).toBeNull();
      expect(stack.server.embeddingsUnavailableReason).toMatch(
        /'no-such-model' is neither a directory, a folder of .*shared-default/,
      );
    });
  });
});

describe('chat completions', () => {
  it('reads a scanned two-column page through generateText with an image part', { timeout: 180_000 }, async () => {
    const openai = createOpenAI({ baseURL: withModel.baseURL, apiKey });
    const started = Date.now();
    const result = await generateText({
      model: openai.chat('devstack-ocr'),
      maxRetries: 0,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Transcribe the text in this image.' },
            { type: 'image', image: pagePng },
          ],
        },
      ],
    });
    const truth = await readFile(`${DOCS_DIR}scan-linn-2col.groundtruth.txt`, 'utf8');
    const cer = characterErrorRate(result.text, truth);
    console.log(`OCR of scan-linn-2col: CER ${cer.toFixed(4)} over ${truth.length} chars in ${Date.now() - started} ms`);
    expect(cer).toBeLessThan(MAX_CER);
    expect(result.text).toMatch(/^The LinnSequencer 32 Track MIDI Sequence Recorder\n\nThe LinnSequencer is a state-of-the-art /);
    expect(result.finishReason).toBe('stop');
    expect(result.usage.outputTokens).toBeGreaterThan(500);
  });

  it('streams OpenAI chunks ending in [DONE], with usage when asked', { timeout: 60_000 }, async () => {
    const request = (stream: boolean) => ({
      model: 'devstack-ocr',
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: pngDataUrl(titlePng) } }] }],
    });
    const whole = await post(withModel.baseURL, '/chat/completions', request(false));
    expect(whole.status).toBe(200);
    expect(whole.json).toMatchObject({
      object: 'chat.completion',
      model: 'devstack-ocr',
      choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'stop' }],
    });
    expect(whole.json.id).toMatch(/^chatcmpl-/);
    const text = whole.json.choices[0].message.content as string;
    expect(text).toBe('The LinnSequencer 32 Track MIDI Sequence Recorder');
    // The image is the only input: its tiles, as OpenAI counts them (a 340-pixel strip of the page, one tile high).
    const { width } = sniffImage(titlePng) as { width: number };
    const imageTokens = 85 + 170 * Math.ceil(Math.floor(Math.min(width, 2048)) / 512);
    expect(imageTokens).toBeGreaterThan(255);
    expect(whole.json.usage).toEqual({ prompt_tokens: imageTokens, completion_tokens: 7, total_tokens: imageTokens + 7 });

    const streamed = await post(withModel.baseURL, '/chat/completions', request(true));
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = sseEvents(streamed.text);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ object: 'chat.completion.chunk', model: 'devstack-ocr', id: chunks[0].id });
    }
    expect(chunks[0].choices[0].delta).toMatchObject({ role: 'assistant', content: '' });
    const content = chunks.flatMap((c) => c.choices.map((choice: any) => choice.delta.content ?? '')).join('');
    expect(content).toBe(text);
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBe(text.split('\n\n').length);
    const finish = chunks.at(-2);
    expect(finish.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(finish.usage).toBeNull();
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: imageTokens, completion_tokens: 7, total_tokens: imageTokens + 7 },
    });
  });

  it('counts an image’s input tokens as OpenAI does: 85, plus 170 per 512-pixel tile at high detail', () => {
    const png = (width: number, height: number) => ({ format: 'png' as const, width, height });
    // OpenAI's own examples: 1024×1024 is shrunk to 768×768, four tiles; 2048×4096 to 768×1536, six.
    expect(imageInputTokens(png(1024, 1024))).toBe(765);
    expect(imageInputTokens(png(2048, 4096), 'high')).toBe(1105);
    expect(imageInputTokens(png(4096, 8192), 'low')).toBe(85);
    // Never enlarged: a small image is one tile; a very wide one is fitted within 2048 first.
    expect(imageInputTokens(png(150, 150), 'auto')).toBe(255);
    expect(imageInputTokens(png(8000, 400))).toBe(85 + 170 * 4);
    // No size in the header: the least an image costs.
    expect(imageInputTokens({ format: 'webp' })).toBe(85);
  });

  it('streams through streamText and reads an image from a loopback URL', { timeout: 60_000 }, async () => {
    const openai = createOpenAI({ baseURL: withModel.baseURL, apiKey });
    const result = streamText({
      model: openai.chat('devstack-ocr'),
      maxRetries: 0,
      messages: [{ role: 'user', content: [{ type: 'image', image: new URL(`${withModel.origin}/files/title.png`) }] }],
    });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe('The LinnSequencer 32 Track MIDI Sequence Recorder');
    expect(await result.finishReason).toBe('stop');
    expect((await result.usage).outputTokens).toBe(7);
  });

  it('runs concurrent OCR requests one after another on the one worker it keeps', { timeout: 60_000 }, async () => {
    const body = {
      model: 'devstack-ocr',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: pngDataUrl(titlePng) } }] }],
    };
    const results = await Promise.all([1, 2, 3].map(() => post(withModel.baseURL, '/chat/completions', body)));
    for (const result of results) {
      expect(result.json.choices[0].message.content).toBe('The LinnSequencer 32 Track MIDI Sequence Recorder');
    }
    expect(withModel.logs.filter((l) => l.startsWith('ocr: tesseract ready'))).toHaveLength(1);
  });

  it('refuses images it cannot read or fetch with a 400 naming the part', { timeout: 60_000 }, async () => {
    const image = (url: string) => ({
      model: 'devstack-ocr',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'read' },
            { type: 'image_url', image_url: { url } },
          ],
        },
      ],
    });
    const corrupt = titlePng.slice(0, 200);
    const cases: [string, string][] = [
      [pngDataUrl(corrupt), 'invalid_image'],
      [`data:image/gif;base64,${Buffer.from('GIF89a......').toString('base64')}`, 'invalid_image_format'],
      ['data:image/png,rawbytes', 'invalid_image_url'],
      ['https://example.com/scan.png', 'invalid_image_url'],
      [`${withModel.origin}/files/missing.png`, 'invalid_image_url'],
      ['file:///etc/passwd', 'invalid_image_url'],
    ];
    for (const [url, code] of cases) {
      const response = await post(withModel.baseURL, '/chat/completions', image(url));
      expect(response.status, url).toBe(400);
      expect(response.json.error).toMatchObject({
        type: 'invalid_request_error',
        code,
        param: 'messages.0.content.1.image_url.url',
      });
    }
    // The worker survives a bad image.
    const after = await post(withModel.baseURL, '/chat/completions', image(pngDataUrl(titlePng)));
    expect(after.json.choices[0].message.content).toMatch(/^The LinnSequencer/);
  });

  it('answers text-only requests with 501 when text generation is turned off', async () => {
    await withServer({ textEngine: null }, async (off) => {
      expect(off.server.models.text).toBeUndefined();
      const response = await post(off.baseURL, '/chat/completions', {
        model: 'devstack-ocr',
        messages: [{ role: 'user', content: 'What is a LinnSequencer?' }],
      });
      expect(response.status).toBe(501);
      expect(response.json.error).toMatchObject({
        message: 'text generation is turned off on this server',
        type: 'not_implemented',
      });
      const refused = await post(off.baseURL, '/chat/completions', {
        model: 'devstack-extractive',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(refused.status).toBe(404);

      const openai = createOpenAI({ baseURL: off.baseURL, apiKey });
      const failure = await generateText({ model: openai.chat('devstack-ocr'), prompt: 'hello', maxRetries: 0 }).catch((e) => e);
      expect(APICallError.isInstance(failure)).toBe(true);
      expect(failure.statusCode).toBe(501);
    });
  });

  it('answers text-only requests with the extractive engine by default', async () => {
    const openai = createOpenAI({ baseURL: withModel.baseURL, apiKey });
    const result = await generateText({
      model: openai.chat('devstack-extractive'),
      prompt: 'What is a LinnSequencer?',
      maxRetries: 0,
    });
    // A bare question carries no passages to answer from.
    expect(result.text).toBe('The documents do not contain an answer to this question.');
  });

  it('refuses unknown models and malformed messages', async () => {
    const wrongModel = await post(withModel.baseURL, '/chat/completions', {
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(wrongModel.status).toBe(404);
    expect(wrongModel.json.error).toMatchObject({ code: 'model_not_found', param: 'model' });
    const badPart = await post(withModel.baseURL, '/chat/completions', {
      model: 'devstack-ocr',
      messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: '', format: 'wav' } }] }],
    });
    expect(badPart.status).toBe(400);
    expect(badPart.json.error.param).toBe('messages.0.content.0.type');
    expect(badPart.json.error.message).toMatch(/Expected 'text' \| 'image_url'/);
  });
});

describe('chat completions with a text engine', () => {
  let seen: ChatMessage[][] = [];
  const engine: TextEngine = async function* (messages) {
    seen.push(messages);
    const question = messages.at(-1)?.content ?? '';
    if (question === 'fail') throw new Error('engine exploded at /secret/path.ts:12');
    if (question === 'fail later') {
      yield 'It ';
      throw new Error('engine exploded later');
    }
    for (const word of ['It ', 'is ', 'a ', 'drum ', 'machine.']) yield word;
  };
  let stack: Running;

  beforeAll(async () => {
    stack = await start({ embeddingModel: tinyModel, textEngine: engine, textModel: 'tiny-chat' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('passes plain-text messages to the engine and streams its pieces', async () => {
    seen = [];
    const openai = createOpenAI({ baseURL: stack.baseURL, apiKey });
    const result = streamText({
      model: openai.chat('tiny-chat'),
      maxRetries: 0,
      system: 'Answer briefly.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is the' },
            { type: 'text', text: 'LinnDrum?' },
          ],
        },
      ],
    });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe('It is a drum machine.');
    expect(seen).toEqual([
      [
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'What is the\nLinnDrum?' },
      ],
    ]);
    const whole = await generateText({ model: openai.chat('devstack-ocr'), prompt: 'hi', maxRetries: 0 });
    expect(whole.text).toBe('It is a drum machine.');
    expect(stack.server.models.text).toBe('tiny-chat');
  });

  it('hides an engine failure behind a generic 500 and logs the cause', async () => {
    const response = await post(stack.baseURL, '/chat/completions', {
      model: 'tiny-chat',
      stream: true,
      messages: [{ role: 'user', content: 'fail' }],
    });
    expect(response.status).toBe(500);
    expect(response.json.error).toMatchObject({ type: 'server_error' });
    expect(response.text).not.toMatch(/secret|exploded|\.ts:/);
    expect(stack.logs.some((l) => l.includes('engine exploded'))).toBe(true);

    // After the first byte the status is sent: the failure becomes an error event and the stream ends.
    const midway = await post(stack.baseURL, '/chat/completions', {
      model: 'tiny-chat',
      stream: true,
      messages: [{ role: 'user', content: 'fail later' }],
    });
    expect(midway.status).toBe(200);
    const events = sseEvents(midway.text).map((e) => JSON.parse(e));
    expect(events.at(-1)).toEqual({ error: expect.objectContaining({ type: 'server_error' }) });
    expect(events.some((e) => e.choices?.[0]?.delta.content === 'It ')).toBe(true);
    expect(midway.text).not.toMatch(/exploded|\[DONE\]/);
    expect(stack.logs.some((l) => l.includes('engine exploded later'))).toBe(true);
  });
});

describe('OCR text cleaning', () => {
  it('collapses spaces, joins paragraph lines, keeps paragraph breaks and mends broken words', () => {
    const raw = 'Title  line\n\n\nFirst   line of a para-\ngraph goes\non here.\n  \nSelf-\nService stays.\n';
    expect(cleanOcrText(raw)).toBe('Title line\n\nFirst line of a paragraph goes on here.\n\nSelf-Service stays.');
    expect(cleanOcrText(' \n\n ')).toBe('');
  });
});
