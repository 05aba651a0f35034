import { AutoModel, AutoTokenizer, env, mean_pooling, type Tensor } from '@huggingface/transformers';
import type { EmbeddingSource } from './embedding-source.ts';

export interface EmbeddingEngine {
  model: string;
  dimension: number;
  /** Inputs are truncated to this many tokens, special tokens included. */
  maxTokens: number;
  /** Unit-length vectors, one per text, and the tokens the model read. */
  embed(texts: string[]): Promise<{ vectors: Float32Array[]; tokens: number }>;
  close(): Promise<void>;
}

// Small enough to bound the padded batch tensor, large enough to keep ONNX Runtime's kernels busy.
const BATCH_SIZE = 32;
// What BERT-family encoders are trained on, for exports that declare no limit.
const FALLBACK_MAX_TOKENS = 512;

/**
 * Loads a sentence-embedding model with transformers.js and ONNX Runtime. transformers.js keeps its
 * settings in one process-wide `env`; they are set here, right before each load, so a hub id is only
 * fetched when the source says it may be and a directory always loads with remote access off.
 */
export async function loadEmbeddingEngine(source: EmbeddingSource, cacheDir: string): Promise<EmbeddingEngine> {
  env.allowLocalModels = true;
  env.allowRemoteModels = source.download;
  env.useFSCache = true;
  env.cacheDir = cacheDir;
  env.localModelPath = cacheDir;
  const options = { local_files_only: !source.download } as const;
  const tokenizer = await AutoTokenizer.from_pretrained(source.id, options);
  const model = await AutoModel.from_pretrained(source.id, {
    ...options,
    dtype: source.dtype,
    device: 'cpu',
    // ONNX Runtime's worker threads spin between runs by default, holding cores that the workers and
    // the database need while a document is ingested; asleep they give them back.
    session_options: { extra: { session: { intra_op: { allow_spinning: '0' } } } },
  });

  const declared = [
    source.maxTokens,
    tokenizer.model_max_length,
    (model.config as { max_position_embeddings?: number }).max_position_embeddings,
  ];
  const limits = declared.filter((n): n is number => typeof n === 'number' && Number.isFinite(n) && n > 0 && n < 1e6);
  const maxTokens = limits.length > 0 ? Math.min(...limits) : FALLBACK_MAX_TOKENS;

  const specialIds = new Set(tokenizer.all_special_ids);
  /**
   * transformers.js truncates after adding special tokens, which cuts the closing [SEP] (or </s>) off long
   * inputs; the Python tokenizers, which these models were trained and evaluated with, keep it. Put it back.
   */
  function restoreClosingTokens(texts: string[], ids: Tensor): void {
    const [rows, width] = ids.dims as [number, number];
    if (width < maxTokens) return;
    const data = ids.data as BigInt64Array;
    for (let row = 0; row < rows; row++) {
      const last = data[row * width + width - 1] as bigint;
      if (specialIds.has(Number(last))) continue;
      const full = tokenizer.encode(texts[row] as string);
      const closing = full.at(-1);
      if (full.length > maxTokens && closing !== undefined && specialIds.has(closing))
        data[row * width + width - 1] = BigInt(closing);
    }
  }

  // One batch at a time: the machine is small and ONNX Runtime already uses every core for one run.
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(() => {});
    return run;
  };

  async function embedBatch(texts: string[]): Promise<{ vectors: Float32Array[]; tokens: number }> {
    const inputs = tokenizer(texts, { padding: true, truncation: true, max_length: maxTokens });
    restoreClosingTokens(texts, inputs.input_ids as Tensor);
    const outputs = (await model(inputs)) as Record<string, Tensor | undefined>;
    const hidden = outputs.last_hidden_state ?? outputs.token_embeddings;
    if (hidden?.dims.length !== 3) {
      throw new Error(`embedding model returned no token embeddings (outputs: ${Object.keys(outputs).join(', ')})`);
    }
    const mask = inputs.attention_mask as Tensor;
    const pooled = source.pooling === 'cls' ? hidden.slice(null, 0) : mean_pooling(hidden, mask);
    const normalized = pooled.normalize(2, -1);
    const [rows, width] = normalized.dims as [number, number];
    const data = normalized.data as Float32Array;
    const vectors = Array.from({ length: rows }, (_, i) => data.slice(i * width, (i + 1) * width));
    let tokens = 0;
    for (const v of mask.data as BigInt64Array) tokens += Number(v);
    return { vectors, tokens };
  }

  const embed = (texts: string[]) =>
    serialized(async () => {
      const vectors: Float32Array[] = [];
      let tokens = 0;
      for (let start = 0; start < texts.length; start += BATCH_SIZE) {
        const batch = await embedBatch(texts.slice(start, start + BATCH_SIZE));
        vectors.push(...batch.vectors);
        tokens += batch.tokens;
      }
      return { vectors, tokens };
    });

  // Running once both proves the model works and tells its output width, whatever the config claims.
  const probe = await embed(['dimension probe']);
  const dimension = probe.vectors[0]?.length ?? 0;
  if (dimension === 0) throw new Error('embedding model returned an empty vector');

  return {
    model: source.name,
    dimension,
    maxTokens,
    embed,
    close: async () => {
      await serialized(() => model.dispose());
    },
  };
}
