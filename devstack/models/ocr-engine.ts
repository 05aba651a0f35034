import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createWorker, OEM, PSM, type Worker } from 'tesseract.js';

export interface OcrEngine {
  /** The recognised text of one image, lightly cleaned. Jobs run one at a time on one reused worker. */
  recognize(image: Uint8Array): Promise<string>;
  close(): Promise<void>;
}

export interface OcrOptions {
  /** Tesseract keeps the unpacked traineddata here, so later starts skip the gunzip. */
  cacheDir: string;
  /** A job still running after this is abandoned and the worker replaced (a wedged or crashed worker thread). */
  jobTimeoutMs?: number;
  log?: (line: string) => void;
}

/** Tesseract could not decode the bytes as an image. */
export class UnreadableImageError extends Error {
  constructor() {
    super('the image could not be decoded');
    this.name = 'UnreadableImageError';
  }
}

interface LanguageData {
  langPath: string;
  gzip: boolean;
  /** Names the cache subdirectory: Tesseract caches every variant as plain `eng.traineddata`. */
  variant: string;
}

/**
 * Where @tesseract.js-data/eng keeps its traineddata. The package's entry points at `4.0.0` (legacy and
 * LSTM models); its sibling `4.0.0_best_int` holds the LSTM model alone, which is what tesseract.js itself
 * fetches for LSTM-only recognition, so that one is used when present. Both are local: nothing is downloaded.
 */
export function englishLanguageData(): LanguageData {
  const require = createRequire(import.meta.url);
  const data = require('@tesseract.js-data/eng') as { langPath: string; gzip: boolean };
  const lstmOnly = join(data.langPath, '..', '4.0.0_best_int');
  const file = `eng.traineddata${data.gzip ? '.gz' : ''}`;
  if (existsSync(join(lstmOnly, file))) return { langPath: lstmOnly, gzip: data.gzip, variant: '4.0.0_best_int' };
  return { langPath: data.langPath, gzip: data.gzip, variant: '4.0.0' };
}

/** Collapses runs of spaces, joins the lines of a paragraph, mends words hyphenated across lines. */
export function cleanOcrText(raw: string): string {
  return raw
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t\f\v]*\n\s*/)
    .map((paragraph) =>
      paragraph
        .split('\n')
        .map((line) => line.replace(/[ \t\f\v\u00a0]+/g, ' ').trim())
        .filter((line) => line.length > 0)
        .reduce((text, line) => {
          if (text === '') return line;
          // "func-" + "tion" is a word broken at the margin; "Self-" + "Service" keeps its hyphen.
          if (/\p{L}-$/u.test(text)) return /^\p{Ll}/u.test(line) ? text.slice(0, -1) + line : text + line;
          return `${text} ${line}`;
        }, ''),
    )
    .filter((paragraph) => paragraph.length > 0)
    .join('\n\n');
}

/**
 * Tesseract (WebAssembly, in a worker thread) started on first use and kept for later requests. In Node,
 * tesseract.js loads its core from the tesseract.js-core package and the language from `langPath` on disk.
 */
export function createOcrEngine(options: OcrOptions): OcrEngine {
  const log = options.log ?? (() => {});
  const jobTimeoutMs = options.jobTimeoutMs ?? 180_000;
  let worker: Promise<Worker> | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;

  async function start(): Promise<Worker> {
    const language = englishLanguageData();
    const cachePath = join(options.cacheDir, 'tesseract', language.variant);
    await mkdir(cachePath, { recursive: true });
    const started = Date.now();
    const w = await createWorker('eng', OEM.LSTM_ONLY, {
      langPath: language.langPath,
      gzip: language.gzip,
      cachePath,
      // Job failures reach the caller as rejections; without a handler tesseract.js would also throw them globally.
      errorHandler: () => {},
    });
    // The library's default is a single uniform block, which reads straight across columns.
    await w.setParameters({ tessedit_pageseg_mode: PSM.AUTO });
    log(`ocr: tesseract ready (eng ${language.variant}) in ${Date.now() - started} ms`);
    return w;
  }

  function getWorker(): Promise<Worker> {
    if (!worker) {
      worker = start();
      // A failed start is retried on the next request rather than cached.
      worker.catch(() => {
        worker = undefined;
      });
    }
    return worker;
  }

  async function run(image: Uint8Array): Promise<string> {
    if (closed) throw new Error('OCR engine is closed');
    const w = await getWorker();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`OCR job took longer than ${jobTimeoutMs} ms`)), jobTimeoutMs);
    });
    try {
      const result = await Promise.race([w.recognize(Buffer.from(image.buffer, image.byteOffset, image.byteLength)), timeout]);
      return cleanOcrText(result.data.text);
    } catch (error) {
      if (String(error).includes('attempting to read image')) throw new UnreadableImageError();
      if (worker) {
        worker = undefined;
        log(`ocr: replacing the tesseract worker after: ${error instanceof Error ? error.message : String(error)}`);
        await w.terminate().catch(() => {});
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    recognize(image) {
      const job = queue.then(
        () => run(image),
        () => run(image),
      );
      queue = job.catch(() => {});
      return job;
    },
    async close() {
      closed = true;
      await queue;
      const w = await worker?.catch(() => undefined);
      worker = undefined;
      await w?.terminate();
    },
  };
}
