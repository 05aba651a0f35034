import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';

export type EmbeddingDtype = 'fp32' | 'q8';
export type Pooling = 'mean' | 'cls';

/** Where the embedding model comes from and how to run it. */
export interface EmbeddingSource {
  /** What transformers.js loads: an absolute directory, or a hub id looked up in the cache dir. */
  id: string;
  /** The name the API answers to: the directory's name, or the hub id. */
  name: string;
  kind: 'directory' | 'hub';
  dtype: EmbeddingDtype;
  pooling: Pooling;
  /** sentence-transformers' max_seq_length, which can be below what the tokenizer allows (256 for all-MiniLM-L6-v2). */
  maxTokens?: number;
  /** A hub id that is not cached yet and may be downloaded. */
  download: boolean;
}

export type ResolvedSource = { source: EmbeddingSource } | { unavailable: string };

/**
 * The devstack's model: the one Workers AI serves as `@cf/baai/bge-small-en-v1.5`, so local and deployed vectors
 * can come from the same model. Looked for by this name under shared/weights first, then on the hub.
 */
export const DEFAULT_SHARED_MODEL = 'bge-small-en-v1.5';
export const DEFAULT_HUB_MODEL = 'Xenova/bge-small-en-v1.5';
/**
 * transformers.js fetches neither 1_Pooling/config.json nor sentence_bert_config.json, so a model from the hub
 * would lose its pooling and length limit: the ones the devstack may download are known here.
 */
const KNOWN_HUB_MODELS: Record<string, { pooling: Pooling; maxTokens: number }> = {
  [DEFAULT_HUB_MODEL]: { pooling: 'cls', maxTokens: 512 },
  'Xenova/all-MiniLM-L6-v2': { pooling: 'mean', maxTokens: 256 },
};

// transformers.js names its weights onnx/model{suffix}.onnx; full precision first, since it is the reference.
const WEIGHTS: [EmbeddingDtype, string][] = [
  ['fp32', 'onnx/model.onnx'],
  ['q8', 'onnx/model_quantized.onnx'],
];
const HUB_ID = /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/;
// Architectures that generate text or score pairs rather than embed one text, so a generator or a cross-encoder
// (the reranker in shared/weights) placed beside the embedder is never picked.
const NOT_AN_EMBEDDER = /(ForCausalLM|ForConditionalGeneration|LMHeadModel|ForSeq2SeqLM|ForSequenceClassification)$/;

export interface ResolveOptions {
  embeddingModel?: string | null;
  /** Searched when embeddingModel is not given. */
  sharedModelsDir: string;
  cacheDir: string;
  allowDownload: boolean;
}

/**
 * Decides which model to load without loading it, and says why when there is none. Only the file
 * system is consulted: nothing here touches the network.
 */
export async function resolveEmbeddingSource(options: ResolveOptions): Promise<ResolvedSource> {
  const wanted = options.embeddingModel?.trim();
  if (wanted) {
    if (await isDirectory(wanted)) return fromDirectory(resolve(wanted));
    // A bare name is a folder of shared/weights: DEVSTACK_EMBEDDING_MODEL=all-MiniLM-L6-v2.
    const shared = join(options.sharedModelsDir, wanted);
    if (!wanted.includes('/') && (await isDirectory(shared))) return fromDirectory(resolve(shared));
    if (!HUB_ID.test(wanted))
      return {
        unavailable: `embedding model '${wanted}' is neither a directory, a folder of ${options.sharedModelsDir}, nor a hub id (owner/name)`,
      };
    return fromHub(wanted, options);
  }
  const found = await findSharedModel(options.sharedModelsDir);
  if (found) return fromDirectory(found);
  return fromHub(DEFAULT_HUB_MODEL, options, `no embedding model under ${options.sharedModelsDir}`);
}

async function fromDirectory(dir: string): Promise<ResolvedSource> {
  const problem = await missingFiles(dir);
  if (problem) return { unavailable: `${dir}: ${problem}` };
  const dtype = (await weightsIn(dir)) as EmbeddingDtype;
  const pooling = await poolingOf(dir);
  if (typeof pooling !== 'string') return { unavailable: `${dir}: ${pooling.unsupported}` };
  const maxTokens = await maxSeqLength(dir);
  return { source: { id: dir, name: basename(dir), kind: 'directory', dtype, pooling, maxTokens, download: false } };
}

async function fromHub(id: string, options: ResolveOptions, context?: string): Promise<ResolvedSource> {
  const cached = join(options.cacheDir, id);
  const problem = await missingFiles(cached);
  const known = KNOWN_HUB_MODELS[id];
  if (!problem) {
    const dtype = (await weightsIn(cached)) as EmbeddingDtype;
    const pooling = known?.pooling ?? (await poolingOf(cached));
    if (typeof pooling !== 'string') return { unavailable: `${cached}: ${pooling.unsupported}` };
    const maxTokens = (await maxSeqLength(cached)) ?? known?.maxTokens;
    return { source: { id, name: id, kind: 'hub', dtype, pooling, maxTokens, download: false } };
  }
  if (!options.allowDownload) {
    const prefix = context ? `${context}, and ` : '';
    return { unavailable: `${prefix}${id} is not in the cache at ${options.cacheDir} (model downloads are off)` };
  }
  // Most of Xenova's exports are mean-pooled sentence-transformers models; the known ones say otherwise.
  const pooling = known?.pooling ?? 'mean';
  return { source: { id, name: id, kind: 'hub', dtype: 'fp32', pooling, maxTokens: known?.maxTokens, download: true } };
}

async function missingFiles(dir: string): Promise<string | undefined> {
  if (!(await isDirectory(dir))) return 'not a directory';
  for (const file of ['config.json', 'tokenizer.json']) {
    if (!(await isFile(join(dir, file)))) return `no ${file}`;
  }
  if (!(await weightsIn(dir))) return `no ${WEIGHTS.map(([, file]) => file).join(' or ')}`;
  return undefined;
}

async function weightsIn(dir: string): Promise<EmbeddingDtype | undefined> {
  for (const [dtype, file] of WEIGHTS) if (await isFile(join(dir, file))) return dtype;
  return undefined;
}

/** sentence-transformers records its pooling in 1_Pooling/config.json; a bare encoder export is mean-pooled. */
async function poolingOf(dir: string): Promise<Pooling | { unsupported: string }> {
  const config = await readJson(join(dir, '1_Pooling', 'config.json'));
  if (!config) return 'mean';
  if (config.pooling_mode_mean_tokens === true) return 'mean';
  if (config.pooling_mode_cls_token === true) return 'cls';
  const mode = Object.keys(config).find((key) => key.startsWith('pooling_mode_') && config[key] === true);
  return { unsupported: `pooling ${mode ?? 'unknown'} is not supported (only mean and cls)` };
}

async function maxSeqLength(dir: string): Promise<number | undefined> {
  const config = await readJson(join(dir, 'sentence_bert_config.json'));
  const value = config?.max_seq_length;
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

/**
 * DEFAULT_SHARED_MODEL when it is there; else the first model directory, in name order, one or two levels down
 * (`models/name` or `models/owner/name`), preferring sentence-transformers exports over bare encoders and never
 * taking a text generator or a cross-encoder.
 */
export async function findSharedModel(root: string): Promise<string | undefined> {
  const candidates: string[] = [];
  for (const name of await listDirs(root)) {
    const dir = join(root, name);
    if (await isFile(join(dir, 'config.json'))) candidates.push(dir);
    else for (const inner of await listDirs(dir)) candidates.push(join(dir, inner));
  }
  const preferred = candidates.findIndex((dir) => basename(dir) === DEFAULT_SHARED_MODEL);
  if (preferred > 0) candidates.unshift(...candidates.splice(preferred, 1));
  let fallback: string | undefined;
  for (const dir of candidates) {
    if (await missingFiles(dir)) continue;
    const config = await readJson(join(dir, 'config.json'));
    const architectures = Array.isArray(config?.architectures) ? (config.architectures as unknown[]) : [];
    if (architectures.some((a) => typeof a === 'string' && NOT_AN_EMBEDDER.test(a))) continue;
    const sentenceTransformer = (await isFile(join(dir, 'modules.json'))) || (await isDirectory(join(dir, '1_Pooling')));
    if (sentenceTransformer) return dir;
    fallback ??= dir;
  }
  return fallback;
}

async function listDirs(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

async function readJson(file: string): Promise<Record<string, unknown> | undefined> {
  try {
    const value: unknown = JSON.parse(await readFile(file, 'utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}
