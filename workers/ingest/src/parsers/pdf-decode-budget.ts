/**
 * A budget on what pdf.js decompresses, counted where pdf.js itself decodes.
 *
 * A scan of the file's raw bytes cannot see every stream pdf.js will decode: a filter's name can be
 * escaped (`/#46lateDecode`), given by reference or after a comment, and an encrypted stream is
 * ciphertext until pdf.js decrypts it. So the count is kept inside pdf.js instead. Every decoded
 * stream there (inflate, LZW, predictors, decryption, the join of a page's several content streams)
 * is one class, whose buffer grows in one method, `ensureBuffer`, or is filled by the runtime's
 * DecompressionStream in another, `asyncGetBytesFromDecompressionStream`. Both are wrapped here, so a
 * byte pdf.js decodes is counted before its memory is taken, whatever syntax led to it.
 *
 * pdf.js exports no such class. Its constructor's first act is to set `_rawMinBufferLength`, a
 * property nothing else in pdf.js (or here) has, so a setter of that name on Object.prototype
 * meets the first instance ever made, finds the class's prototype, wraps its two methods and
 * removes itself before the instance's constructor goes on. `decodeBudgetInstalled()` tells a test
 * that a pdf.js upgrade has not moved them.
 *
 * The bytes are charged to the budget of the parse under way. An isolate parses one PDF at a time
 * (`withDecodeBudget` queues the others): pdf.js's work is synchronous CPU, so nothing is lost by
 * waiting, and two documents' pages at once could hold twice what one page may.
 */

export interface DecodeLimits {
  /** One stream: the buffer pdf.js holds for it whole. */
  stream: number;
  /** While one page is read (its text, operators, images and the fonts it loads), and while the file is opened. */
  page: number;
  /** One parse step: past it the step ends after its current page and the next step reads on. */
  step: number;
  /** The whole document, over all its steps: past it nothing more is decoded and the document ends. */
  document: number;
}

/** Why a decode was refused. */
export type Refusal = 'stream' | 'page' | 'document';

/** Thrown inside pdf.js when a decode would pass the budget; pdf.js drops that stream or the rest of that page. */
export class DecodeRefused extends Error {
  override name = 'DecodeRefused';
  constructor(readonly refusal: Refusal) {
    super(`decoding refused: over the ${refusal} budget`);
  }
}

/** What one parse step may decode, and what it did. */
export class DecodeBudget {
  /** Bytes decoded in this step. */
  stepBytes = 0;
  /** Bytes decoded since `startPage`. */
  pageBytes = 0;
  /** Streams refused for being over the stream budget, by object id (a stream is decoded more than once). */
  readonly refusedStreams = new Set<unknown>();
  /** Pages (1-based) that were read only in part because they passed the page budget. */
  readonly pagesCut: number[] = [];
  /** The document's budget ran out during this step. */
  documentSpent = false;
  /** Every kind of refusal met, the opening of the file included. */
  readonly refusals = new Set<Refusal>();
  /** A decode was refused since `startPage`. */
  refusedOnPage = false;
  private page = 0;

  constructor(
    readonly limits: DecodeLimits,
    /** What the document's earlier steps decoded. */
    readonly documentBefore = 0,
  ) {}

  /** Page `page` begins: its own budget starts afresh. */
  startPage(page: number): void {
    this.page = page;
    this.pageBytes = 0;
    this.refusedOnPage = false;
  }

  /** This step has decoded its share; the next step should read on. */
  get stepSpent(): boolean {
    return this.stepBytes >= this.limits.step;
  }

  /** Everything the document has decoded so far, this step included. */
  get documentBytes(): number {
    return this.documentBefore + this.stepBytes;
  }

  /** Takes `bytes` more for a stream that will then hold `streamBytes`, or throws DecodeRefused. */
  charge(bytes: number, streamBytes: number, streamId: unknown): void {
    if (streamBytes > this.limits.stream) {
      this.refusedStreams.add(streamId);
      this.refuse('stream');
    }
    if (this.documentSpent || this.documentBytes + bytes > this.limits.document) {
      this.documentSpent = true;
      this.refuse('document');
    }
    if (this.pageBytes + bytes > this.limits.page) {
      if (this.page > 0 && this.pagesCut.at(-1) !== this.page) this.pagesCut.push(this.page);
      this.refuse('page');
    }
    this.pageBytes += bytes;
    this.stepBytes += bytes;
  }

  private refuse(refusal: Refusal): never {
    this.refusals.add(refusal);
    this.refusedOnPage = true;
    throw new DecodeRefused(refusal);
  }
}

/** The budget of the parse under way in this isolate. */
let current: DecodeBudget | undefined;
/** The parses queued in this isolate, each starting when the one before it has ended. */
let queue: Promise<unknown> = Promise.resolve();
/**
 * How long a parse waits for the one before it. A request cancelled mid-parse (its caller gone)
 * never ends its parse, and must not hold every later one; past this wait the next starts anyway,
 * and what a parse still running decodes is then charged to the newer budget, which errs on the safe side.
 */
const MAX_WAIT_MS = 60_000;

/**
 * Runs `work` (which drives pdf.js) once the isolate's earlier parses have ended, with every byte
 * pdf.js decodes meanwhile charged to `budget`. Decoding outside any parse is held to the stream
 * limit only (`UNSCOPED_STREAM_BYTES`).
 */
export function withDecodeBudget<T>(budget: DecodeBudget, work: () => Promise<T>): Promise<T> {
  installTrap();
  const before = queue;
  const run = (async () => {
    await waitAtMost(before, MAX_WAIT_MS);
    current = budget;
    try {
      return await work();
    } finally {
      if (current === budget) current = undefined;
    }
  })();
  queue = run.catch(() => undefined);
  return run;
}

async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const elapsed = new Promise((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([promise, elapsed]);
  if (timer !== undefined) clearTimeout(timer);
}

/** Whether pdf.js's decoding class has been found and wrapped (after the first stream it decoded). */
export function decodeBudgetInstalled(): boolean {
  return installed;
}

/** A stream decoded with no budget in scope (none of ours) may still not pass this. */
const UNSCOPED_STREAM_BYTES = 16 * 1024 * 1024;

/** The parts of pdf.js's DecodeStream used here. */
interface DecodeStream {
  buffer: Uint8Array;
  minBufferLength: number;
  dict?: { objId?: string | null };
  stream: {
    reset(): void;
    isAsync?: boolean;
    getBytes(): Uint8Array;
    asyncGetBytes(): Promise<Uint8Array | null>;
  };
}
type EnsureBuffer = (this: DecodeStream, requested: number) => Uint8Array;

const MARKER = '_rawMinBufferLength';
let installed = false;
let trapSet = false;

function installTrap(): void {
  if (installed || trapSet) return;
  trapSet = true;
  Object.defineProperty(Object.prototype, MARKER, {
    configurable: true,
    set(this: object, value: unknown) {
      // The first decoded stream: give it the plain property it meant to set, then wrap its class.
      Object.defineProperty(this, MARKER, { value, writable: true, enumerable: true, configurable: true });
      delete (Object.prototype as Record<string, unknown>)[MARKER];
      wrap(this);
    },
  });
}

function wrap(instance: object): void {
  let proto: Record<string, unknown> | null = Object.getPrototypeOf(instance);
  while (proto && !Object.hasOwn(proto, 'ensureBuffer')) proto = Object.getPrototypeOf(proto);
  if (!proto || typeof proto.asyncGetBytesFromDecompressionStream !== 'function') {
    // A pdf.js that moved these methods: the budget cannot hold, which tests must see at once.
    throw new Error('pdf.js decode budget: DecodeStream.ensureBuffer or asyncGetBytesFromDecompressionStream not found');
  }
  const ensureBuffer = proto.ensureBuffer as EnsureBuffer;
  proto.ensureBuffer = function (this: DecodeStream, requested: number): Uint8Array {
    const buffer = this.buffer;
    if (requested <= buffer.byteLength) return buffer;
    // pdf.js doubles its buffer from minBufferLength until the request fits: that is what it will allocate.
    let size = this.minBufferLength;
    while (size < requested) size *= 2;
    charge(this, size - buffer.byteLength, requested);
    return ensureBuffer.call(this, requested);
  };
  proto.asyncGetBytesFromDecompressionStream = decompressCounted;
  installed = true;
}

function charge(stream: DecodeStream, bytes: number, streamBytes: number): void {
  const budget = current;
  if (budget) budget.charge(bytes, streamBytes, stream.dict?.objId ?? stream.dict ?? stream);
  else if (streamBytes > UNSCOPED_STREAM_BYTES) throw new DecodeRefused('stream');
}

/**
 * pdf.js's own inflate (or Brotli) through the runtime's DecompressionStream, with each piece
 * charged as it arrives. Its result is pdf.js's: the bytes, or `decompressed: null`, on which pdf.js
 * decodes the stream itself instead; that is what a refusal gives too, so that the stream's start
 * (text before a bomb, say) is read through `ensureBuffer`, which stops at the budget.
 */
async function decompressCounted(this: DecodeStream, format: ConstructorParameters<typeof DecompressionStream>[0]) {
  this.stream.reset();
  const compressed = this.stream.isAsync ? await this.stream.asyncGetBytes() : this.stream.getBytes();
  const parts: Uint8Array[] = [];
  let total = 0;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  try {
    // A runtime without the format (Brotli) throws here, and pdf.js decodes it itself.
    const { readable, writable } = new DecompressionStream(format);
    const writer = writable.getWriter();
    writer
      .write(compressed as Uint8Array<ArrayBuffer>)
      .then(() => writer.close())
      .catch(() => {});
    reader = readable.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      charge(this, read.value.byteLength, total + read.value.byteLength);
      parts.push(read.value);
      total += read.value.byteLength;
    }
  } catch {
    await reader?.cancel().catch(() => {});
    return { decompressed: null, compressed };
  }
  const decompressed = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    decompressed.set(part, at);
    at += part.byteLength;
  }
  return { decompressed, compressed };
}
