import type { Includes, Scored, SparseVector, StoredVector } from './types.ts';

export interface VectorJson {
  id: string;
  score?: number;
  vector?: number[];
  sparseVector?: SparseVector;
  metadata?: Record<string, unknown>;
  data?: string;
}

/**
 * The shortest decimal that reads back as the same 32-bit float: vectors are stored as f32,
 * and Upstash answers an upserted 0.1 with 0.1, not 0.10000000149011612. Round-tripping is
 * monotone in the number of digits, so a binary search over 1..9 digits finds it.
 */
export function float32ToJson(x: number): number {
  let low = 1;
  let high = 9;
  while (low < high) {
    const digits = (low + high) >> 1;
    if (Math.fround(Number(x.toPrecision(digits))) === x) high = digits;
    else low = digits + 1;
  }
  const shortest = Number(x.toPrecision(low));
  // Nine digits always round-trip, should the binary search land short near a power of two.
  return Math.fround(shortest) === x ? shortest : Number(x.toPrecision(9));
}

export function renderVector(record: StoredVector, includes: Includes, score?: number): VectorJson {
  const json: VectorJson = { id: record.id };
  if (score !== undefined) json.score = score;
  if (includes.includeVectors) {
    if (record.vector) json.vector = Array.from(record.vector, float32ToJson);
    if (record.sparseVector) {
      json.sparseVector = { indices: record.sparseVector.indices, values: record.sparseVector.values.map(float32ToJson) };
    }
  }
  if (includes.includeMetadata && record.metadata) json.metadata = record.metadata;
  if (includes.includeData && record.data !== undefined) json.data = record.data;
  return json;
}

export function renderScored(results: Scored[], includes: Includes): VectorJson[] {
  return results.map(({ record, score }) => renderVector(record, includes, score));
}
