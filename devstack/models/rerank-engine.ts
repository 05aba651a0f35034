import { AutoModelForSequenceClassification, AutoTokenizer, env, type Tensor } from '@huggingface/transformers';

export interface RerankEngine {
  /** The name the API answers to: the model directory's name. */
  model: string;
  /** One relevance score in (0, 1) per passage, in the passages' order, and the tokens the model read. */
  score(query: string, passages: string[], maxTokensPerPassage?: number): Promise<{ scores: number[]; tokens: number }>;
  close(): Promise<void>;
}

/**
 * A cross-encoder's cost grows with its pairs' padded length, and on two cores one pair of 512 tokens
 * takes about 100 ms: passages are cut to this many tokens unless the request asks for fewer. 256
 * holds a default 1000-character chunk whole (about 200-250 word pieces).
 */
export const DEFAULT_PASSAGE_TOKENS = 256;
// Pairs per ONNX run: padding to the longest pair of a batch wastes less in small batches, and eight
// keeps both cores busy.
const BATCH_SIZE = 8;
// What the BERT cross-encoders are trained with ([CLS] query [SEP] passage [SEP]).
const MAX_PAIR_TOKENS = 512;

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/**
 * Loads a cross-encoder (BertForSequenceClassification with one logit, e.g. ms-marco-MiniLM-L-12-v2) with
 * transformers.js from a local directory, never from the network. Its logit is turned into a score in
 * (0, 1) by the sigmoid, as Cohere's `relevance_score` is.
 */
export async function loadRerankEngine(dir: string, name: string): Promise<RerankEngine> {
  env.allowLocalModels = true;
  env.allowRemoteModels = false;
  const tokenizer = await AutoTokenizer.from_pretrained(dir, { local_files_only: true });
  const model = await AutoModelForSequenceClassification.from_pretrained(dir, {
    local_files_only: true,
    dtype: 'q8',
    device: 'cpu',
    // As the embedding engine: sleeping ONNX threads give the cores back between runs.
    session_options: { extra: { session: { intra_op: { allow_spinning: '0' } } } },
  });

  /** The passage's first `limit` word pieces, as text: the query is never cut. */
  function capped(passage: string, limit: number): string {
    const ids = tokenizer.encode(passage, { add_special_tokens: false });
    return ids.length <= limit ? passage : tokenizer.decode(ids.slice(0, limit), { skip_special_tokens: true });
  }

  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(() => {});
    return run;
  };

  async function scoreBatch(query: string, passages: string[]): Promise<{ scores: number[]; tokens: number }> {
    const inputs = tokenizer(
      passages.map(() => query),
      { text_pair: passages, padding: true, truncation: true, max_length: MAX_PAIR_TOKENS },
    );
    const { logits } = (await model(inputs)) as { logits: Tensor };
    const data = logits.data as Float32Array;
    const width = (logits.dims[1] as number | undefined) ?? 1;
    const scores = passages.map((_, i) => sigmoid(data[i * width] as number));
    let tokens = 0;
    for (const v of (inputs.attention_mask as Tensor).data as BigInt64Array) tokens += Number(v);
    return { scores, tokens };
  }

  const score = (query: string, passages: string[], maxTokensPerPassage = DEFAULT_PASSAGE_TOKENS) =>
    serialized(async () => {
      const limit = Math.max(1, Math.min(maxTokensPerPassage, DEFAULT_PASSAGE_TOKENS));
      const cut = passages.map((p) => capped(p, limit));
      const scores: number[] = [];
      let tokens = 0;
      for (let start = 0; start < cut.length; start += BATCH_SIZE) {
        const batch = await scoreBatch(query, cut.slice(start, start + BATCH_SIZE));
        scores.push(...batch.scores);
        tokens += batch.tokens;
      }
      return { scores, tokens };
    });

  // Proves the model runs before the server says it reranks.
  const probe = await score('probe', ['a probe passage']);
  if (probe.scores.length !== 1 || !Number.isFinite(probe.scores[0])) throw new Error('reranking model gave no score');

  return {
    model: name,
    score,
    close: async () => {
      await serialized(() => model.dispose());
    },
  };
}
