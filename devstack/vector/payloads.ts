import { badRequest, VectorError } from './errors.ts';
import { parseFilter } from './filter.ts';
import type { IndexShape, Metadata, QueryMode, SparseVector, VectorQuery, VectorWrite } from './types.ts';

/** Upstash's limits: non-zero dimensions of a sparse vector, and results of one query. */
const maxSparseDimensions = 1000;
const maxTopK = 1000;

type Json = Record<string, unknown>;

export function asObject(value: unknown, what: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest(`${what} must be a JSON object`);
  return value as Json;
}

/** One item or an array of them; Upstash accepts both on upsert and query. */
export function asItems(body: unknown, what: string): Json[] {
  return Array.isArray(body) ? body.map((item, i) => asObject(item, `${what}[${i}]`)) : [asObject(body, what)];
}

export function parseId(value: unknown, what = 'id'): string {
  if (typeof value === 'string' && value.length > 0) return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw badRequest(`${what} must be a non-empty string or a number`);
}

export function parseIds(value: unknown): string[] {
  if (!Array.isArray(value)) return [parseId(value)];
  return value.map((id, i) => parseId(id, `ids[${i}]`));
}

function optionalBoolean(body: Json, field: string): boolean {
  const value = body[field];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw badRequest(`${field} must be a boolean`);
  return value;
}

export function parseIncludes(body: Json) {
  return {
    includeMetadata: optionalBoolean(body, 'includeMetadata'),
    includeVectors: optionalBoolean(body, 'includeVectors'),
    includeData: optionalBoolean(body, 'includeData'),
  };
}

export function parseDense(value: unknown, shape: IndexShape): Float32Array {
  if (!Array.isArray(value) || !value.every((x) => typeof x === 'number' && Number.isFinite(x))) {
    throw badRequest('vector must be an array of finite numbers');
  }
  if (value.length !== shape.dimension) {
    throw new VectorError(422, `Invalid vector dimension: ${value.length}, expected: ${shape.dimension}`);
  }
  return Float32Array.from(value as number[]);
}

export function parseSparse(value: unknown): SparseVector {
  const sparse = asObject(value, 'sparseVector');
  const { indices, values } = sparse;
  if (!Array.isArray(indices) || !Array.isArray(values)) throw badRequest('sparseVector needs indices and values arrays');
  if (indices.length !== values.length) {
    throw badRequest(`sparseVector indices and values must have the same length, got ${indices.length} and ${values.length}`);
  }
  if (indices.length > maxSparseDimensions) {
    throw badRequest(`sparseVector may have at most ${maxSparseDimensions} non-zero dimensions, got ${indices.length}`);
  }
  const seen = new Set<number>();
  for (const index of indices) {
    if (!Number.isInteger(index) || index < -(2 ** 31) || index >= 2 ** 31) {
      throw badRequest('sparseVector indices must be 32-bit integers');
    }
    if (seen.has(index)) throw badRequest(`sparseVector has duplicate index ${index}`);
    seen.add(index);
  }
  if (!values.every((x) => typeof x === 'number' && Number.isFinite(x)))
    throw badRequest('sparseVector values must be finite numbers');
  // Stored as 32-bit floats, like Upstash does.
  return { indices: [...(indices as number[])], values: (values as number[]).map(Math.fround) };
}

function parseMetadata(value: unknown): Metadata | undefined {
  if (value === undefined || value === null) return undefined;
  return asObject(value, 'metadata');
}

function parseData(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badRequest('data must be a string');
  return value;
}

/** Which vector parts a write must carry, fixed by the index type as on Upstash. */
function checkParts(shape: IndexShape, hasDense: boolean, hasSparse: boolean, what: string, partial: boolean): void {
  if (shape.indexType === 'DENSE' && hasSparse) throw badRequest(`${what}: sparseVector is not allowed on a dense index`);
  if (shape.indexType === 'SPARSE' && hasDense) throw badRequest(`${what}: vector is not allowed on a sparse index`);
  if (partial) {
    if (shape.indexType === 'HYBRID' && hasDense !== hasSparse) {
      throw badRequest(`${what}: a hybrid index updates vector and sparseVector together, or neither`);
    }
    return;
  }
  if (shape.indexType === 'DENSE' && !hasDense) throw badRequest(`${what}: vector is required on a dense index`);
  if (shape.indexType === 'SPARSE' && !hasSparse) throw badRequest(`${what}: sparseVector is required on a sparse index`);
  if (shape.indexType === 'HYBRID' && !(hasDense && hasSparse)) {
    throw badRequest(`${what}: a hybrid index needs both vector and sparseVector`);
  }
}

export function parseUpsert(body: unknown, shape: IndexShape): VectorWrite[] {
  return asItems(body, 'upsert').map((item, i) => {
    const what = Array.isArray(body) ? `upsert[${i}]` : 'upsert';
    const hasDense = item.vector !== undefined && item.vector !== null;
    const hasSparse = item.sparseVector !== undefined && item.sparseVector !== null;
    checkParts(shape, hasDense, hasSparse, what, false);
    return {
      id: parseId(item.id, `${what}.id`),
      vector: hasDense ? parseDense(item.vector, shape) : undefined,
      sparseVector: hasSparse ? parseSparse(item.sparseVector) : undefined,
      metadata: parseMetadata(item.metadata),
      data: parseData(item.data),
    };
  });
}

export interface UpdateRequest {
  id: string;
  vector?: Float32Array;
  sparseVector?: SparseVector;
  metadata?: Metadata;
  data?: string;
  metadataUpdateMode: 'OVERWRITE' | 'PATCH';
}

export function parseUpdate(body: unknown, shape: IndexShape): UpdateRequest {
  const item = asObject(body, 'update');
  const hasDense = item.vector !== undefined && item.vector !== null;
  const hasSparse = item.sparseVector !== undefined && item.sparseVector !== null;
  checkParts(shape, hasDense, hasSparse, 'update', true);
  const mode = item.metadataUpdateMode ?? 'OVERWRITE';
  if (mode !== 'OVERWRITE' && mode !== 'PATCH') throw badRequest('metadataUpdateMode must be OVERWRITE or PATCH');
  const update: UpdateRequest = {
    id: parseId(item.id),
    vector: hasDense ? parseDense(item.vector, shape) : undefined,
    sparseVector: hasSparse ? parseSparse(item.sparseVector) : undefined,
    metadata: parseMetadata(item.metadata),
    data: parseData(item.data),
    metadataUpdateMode: mode,
  };
  if (!update.vector && !update.sparseVector && !update.metadata && update.data === undefined) {
    throw badRequest('update needs at least one of vector, sparseVector, metadata or data');
  }
  return update;
}

function oneOf<T extends string>(body: Json, field: string, allowed: readonly T[], fallback: T): T {
  const value = body[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string' || !allowed.includes(value as T))
    throw badRequest(`${field} must be one of ${allowed.join(', ')}`);
  return value as T;
}

export function parseQuery(item: Json, shape: IndexShape): VectorQuery {
  const hasDense = item.vector !== undefined && item.vector !== null;
  const hasSparse = item.sparseVector !== undefined && item.sparseVector !== null;
  if (!hasDense && !hasSparse) throw badRequest('query needs a vector or a sparseVector');
  if (shape.indexType === 'DENSE' && hasSparse) throw badRequest('sparseVector is not allowed on a dense index');
  if (shape.indexType === 'SPARSE' && hasDense) throw badRequest('vector is not allowed on a sparse index');
  const topK = item.topK ?? 10;
  if (typeof topK !== 'number' || !Number.isInteger(topK) || topK < 1 || topK > maxTopK) {
    throw badRequest(`topK must be an integer between 1 and ${maxTopK}`);
  }
  if (item.filter !== undefined && item.filter !== null && typeof item.filter !== 'string')
    throw badRequest('filter must be a string');
  const filter = typeof item.filter === 'string' && item.filter.trim() !== '' ? parseFilter(item.filter) : undefined;
  const weighting = item.weightingStrategy;
  if (weighting !== undefined && weighting !== null && weighting !== 'IDF') throw badRequest('weightingStrategy must be IDF');
  const queryMode = oneOf<QueryMode>(item, 'queryMode', ['HYBRID', 'DENSE', 'SPARSE'], 'HYBRID');
  if (queryMode === 'DENSE' && !hasDense) throw badRequest('queryMode DENSE needs a vector');
  if (queryMode === 'SPARSE' && !hasSparse) throw badRequest('queryMode SPARSE needs a sparseVector');
  return {
    vector: hasDense ? parseDense(item.vector, shape) : undefined,
    sparseVector: hasSparse ? parseSparse(item.sparseVector) : undefined,
    topK,
    filter,
    weightingStrategy: weighting === 'IDF' ? 'IDF' : undefined,
    fusionAlgorithm: oneOf(item, 'fusionAlgorithm', ['RRF', 'DBSF'], 'RRF'),
    queryMode,
    ...parseIncludes(item),
  };
}
