import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Writes a tiny BERT-shaped sentence-embedding model in the transformers.js layout (config, WordPiece
 * tokenizer, `onnx/model.onnx`), so the real loading and inference path runs offline. Its hidden state is
 * an embedding-table lookup masked by the attention mask, which makes every embedding computable by hand:
 * mean of the rows for [CLS], the tokens and [SEP], L2-normalised.
 */
export const TINY_VOCAB = [
  '[PAD]',
  '[UNK]',
  '[CLS]',
  '[SEP]',
  '[MASK]',
  'the',
  'cat',
  'sat',
  'on',
  'mat',
  'dog',
  'ran',
  'a',
  'park',
  'in',
  '##s',
  '.',
];
export const TINY_DIMENSION = 8;
/** Inputs are truncated to this many tokens, [CLS] and [SEP] included. */
export const TINY_MAX_LENGTH = 12;

export function tinyEmbeddingRow(id: number): number[] {
  // Deterministic, distinct and well spread rows; any fixed table would do.
  return Array.from(
    { length: TINY_DIMENSION },
    (_, j) => Math.sin((id + 1) * 1.7 + j * 0.9) + (j === id % TINY_DIMENSION ? 1 : 0),
  );
}

/**
 * What the model must return for these token ids (without [CLS]/[SEP]), computed by hand: the mean over
 * [CLS], the tokens and [SEP] (which survives truncation), or with `cls` the [CLS] row alone.
 */
export function tinyExpectedEmbedding(tokenIds: number[], { cls = false } = {}): number[] {
  const ids = cls ? [2] : [2, ...tokenIds.slice(0, TINY_MAX_LENGTH - 2), 3];
  const sum = new Array<number>(TINY_DIMENSION).fill(0);
  for (const id of ids) {
    for (const [j, v] of tinyEmbeddingRow(id).entries()) sum[j] = (sum[j] as number) + v / ids.length;
  }
  const norm = Math.hypot(...sum);
  return sum.map((v) => v / norm);
}

export function tinyTokenIds(words: string[]): number[] {
  return words.map((w) => {
    const id = TINY_VOCAB.indexOf(w);
    if (id < 0) throw new Error(`not in the tiny vocabulary: ${w}`);
    return id;
  });
}

export async function writeTinyEmbeddingModel(dir: string): Promise<void> {
  await mkdir(join(dir, 'onnx'), { recursive: true });
  const special = TINY_VOCAB.slice(0, 5);
  await writeFile(
    join(dir, 'config.json'),
    JSON.stringify({
      model_type: 'bert',
      architectures: ['BertModel'],
      hidden_size: TINY_DIMENSION,
      vocab_size: TINY_VOCAB.length,
      max_position_embeddings: TINY_MAX_LENGTH,
    }),
  );
  await writeFile(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({
      tokenizer_class: 'BertTokenizer',
      model_max_length: TINY_MAX_LENGTH,
      do_lower_case: true,
      cls_token: '[CLS]',
      sep_token: '[SEP]',
      pad_token: '[PAD]',
      unk_token: '[UNK]',
      mask_token: '[MASK]',
    }),
  );
  const token = (id: string) => ({ SpecialToken: { id, type_id: 0 } });
  await writeFile(
    join(dir, 'tokenizer.json'),
    JSON.stringify({
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: special.map((content, id) => ({
        id,
        content,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special: true,
      })),
      normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
      pre_tokenizer: { type: 'BertPreTokenizer' },
      post_processor: {
        type: 'TemplateProcessing',
        single: [token('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, token('[SEP]')],
        pair: [
          token('[CLS]'),
          { Sequence: { id: 'A', type_id: 0 } },
          token('[SEP]'),
          { Sequence: { id: 'B', type_id: 1 } },
          token('[SEP]'),
        ],
        special_tokens: {
          '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
          '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
        },
      },
      decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
      model: {
        type: 'WordPiece',
        unk_token: '[UNK]',
        continuing_subword_prefix: '##',
        max_input_chars_per_word: 100,
        vocab: Object.fromEntries(TINY_VOCAB.map((w, i) => [w, i])),
      },
    }),
  );
  await writeFile(join(dir, 'onnx', 'model.onnx'), tinyOnnxModel());
}

// ---- A minimal protobuf writer for the ONNX messages the graph needs (field numbers from onnx.proto). ----

type Field = [number, 'varint', number] | [number, 'bytes', Uint8Array | string] | [number, 'message', Field[]];

function varint(value: number): number[] {
  const out: number[] = [];
  let v = BigInt.asUintN(64, BigInt(value));
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}

function encode(fields: Field[]): Uint8Array {
  const parts: number[] = [];
  for (const [number, kind, value] of fields) {
    if (kind === 'varint') {
      parts.push(...varint(number << 3), ...varint(value));
      continue;
    }
    const bytes = kind === 'message' ? encode(value) : typeof value === 'string' ? new TextEncoder().encode(value) : value;
    parts.push(...varint((number << 3) | 2), ...varint(bytes.length));
    for (const b of bytes) parts.push(b);
  }
  return Uint8Array.from(parts);
}

const FLOAT = 1;
const INT64 = 7;

function tensorType(elemType: number, dims: (number | string)[]): Field[] {
  const shape: Field[] = dims.map((d) => [1, 'message', [typeof d === 'number' ? [1, 'varint', d] : [2, 'bytes', d]]]);
  // TypeProto.tensor_type { elem_type, shape }
  return [
    [
      1,
      'message',
      [
        [1, 'varint', elemType],
        [2, 'message', shape],
      ],
    ],
  ];
}

function valueInfo(name: string, elemType: number, dims: (number | string)[]): Field[] {
  return [
    [1, 'bytes', name],
    [2, 'message', tensorType(elemType, dims)],
  ];
}

function node(op: string, inputs: string[], outputs: string[], attributes: Field[][] = []): Field[] {
  return [
    ...inputs.map((i): Field => [1, 'bytes', i]),
    ...outputs.map((o): Field => [2, 'bytes', o]),
    [3, 'bytes', `${op}_${outputs[0]}`],
    [4, 'bytes', op],
    ...attributes.map((a): Field => [5, 'message', a]),
  ];
}

function tinyOnnxModel(): Uint8Array {
  const table = new Float32Array(TINY_VOCAB.length * TINY_DIMENSION);
  for (const id of TINY_VOCAB.keys()) table.set(tinyEmbeddingRow(id), id * TINY_DIMENSION);
  const axes = new BigInt64Array([-1n]);
  const graph: Field[] = [
    [1, 'message', node('Gather', ['embeddings', 'input_ids'], ['gathered'])],
    // AttributeProto { name, i, type = INT (2) }
    [
      1,
      'message',
      node(
        'Cast',
        ['attention_mask'],
        ['mask_float'],
        [
          [
            [1, 'bytes', 'to'],
            [3, 'varint', FLOAT],
            [20, 'varint', 2],
          ],
        ],
      ),
    ],
    [1, 'message', node('Unsqueeze', ['mask_float', 'axes'], ['mask3'])],
    [1, 'message', node('Mul', ['gathered', 'mask3'], ['last_hidden_state'])],
    [2, 'bytes', 'tiny-embedding'],
    // TensorProto { dims, data_type, name, raw_data }
    [
      5,
      'message',
      [
        [1, 'varint', TINY_VOCAB.length],
        [1, 'varint', TINY_DIMENSION],
        [2, 'varint', FLOAT],
        [8, 'bytes', 'embeddings'],
        [9, 'bytes', new Uint8Array(table.buffer)],
      ],
    ],
    [
      5,
      'message',
      [
        [1, 'varint', 1],
        [2, 'varint', INT64],
        [8, 'bytes', 'axes'],
        [9, 'bytes', new Uint8Array(axes.buffer)],
      ],
    ],
    [11, 'message', valueInfo('input_ids', INT64, ['batch', 'sequence'])],
    [11, 'message', valueInfo('attention_mask', INT64, ['batch', 'sequence'])],
    [12, 'message', valueInfo('last_hidden_state', FLOAT, ['batch', 'sequence', TINY_DIMENSION])],
  ];
  // ModelProto { ir_version = 8, producer_name, graph, opset_import { domain '', version 13 } }
  return encode([
    [1, 'varint', 8],
    [2, 'bytes', 'rag-service tests'],
    [7, 'message', graph],
    [8, 'message', [[2, 'varint', 13]]],
  ]);
}

/** A new temporary folder (the caller removes it) with the tiny model written to its `tiny-minilm`. */
export async function tempDirWithTinyModel(prefix: string): Promise<{ dir: string; model: string }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const model = join(dir, 'tiny-minilm');
  await writeTinyEmbeddingModel(model);
  return { dir, model };
}
