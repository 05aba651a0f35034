import { badRequest, VectorError } from './errors.ts';
import { parseFilter } from './filter.ts';
import { asItems, asObject, parseIds, parseIncludes, parseQuery, parseUpdate, parseUpsert } from './payloads.ts';
import { renderScored, renderVector } from './render.ts';
import type { VectorState } from './state.ts';

export interface CommandContext {
  state: VectorState;
  namespace: string;
  body: unknown;
  /** Query parameters: `reset?all` resets every namespace. */
  query: Record<string, string>;
}

export type Command = (context: CommandContext) => unknown;

/** Upstash's range page limit. */
const maxRangeLimit = 1000;

const noEmbeddingModel = () => {
  throw badRequest(
    'Embedding data for this index is not allowed. The index must be created with an embedding model to use it. ' +
      'The devstack index has none: send vector and/or sparseVector instead of data.',
  );
};

const upsert: Command = ({ state, namespace, body }) => {
  const writes = parseUpsert(body, state.shape);
  if (writes.length === 0) return 'Success';
  state.getOrCreate(namespace).upsert(writes);
  state.changed(namespace);
  return 'Success';
};

const update: Command = ({ state, namespace, body }) => {
  const request = parseUpdate(body, state.shape);
  const updated = state.get(namespace)?.update(request) ?? false;
  if (updated) state.changed(namespace);
  return { updated: updated ? 1 : 0 };
};

const query: Command = ({ state, namespace, body }) => {
  const queries = asItems(body, 'query').map((item) => parseQuery(item, state.shape));
  const store = state.get(namespace);
  const results = queries.map((parsed) => renderScored(store?.query(parsed) ?? [], parsed));
  // A batch of several answers one list per query; a single query, even in an array, a flat list.
  return Array.isArray(body) && body.length > 1 ? results : (results[0] ?? []);
};

const fetchVectors: Command = ({ state, namespace, body }) => {
  const request = Array.isArray(body) ? { ids: body } : asObject(body, 'fetch');
  const includes = parseIncludes(request);
  const store = state.get(namespace);
  if (request.ids !== undefined && request.ids !== null) {
    return parseIds(request.ids).map((id) => {
      const record = store?.get(id);
      return record ? renderVector(record, includes) : null;
    });
  }
  if (typeof request.prefix === 'string')
    return (store?.withPrefix(request.prefix) ?? []).map((record) => renderVector(record, includes));
  throw badRequest('fetch needs ids or a prefix');
};

const deleteVectors: Command = ({ state, namespace, body }) => {
  const store = state.get(namespace);
  let deleted = 0;
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const request = body as Record<string, unknown>;
    if (request.ids !== undefined) deleted = store?.delete(parseIds(request.ids)) ?? 0;
    else if (typeof request.prefix === 'string') {
      const prefix = request.prefix;
      deleted = store?.deleteWhere((record) => record.id.startsWith(prefix)) ?? 0;
    } else if (typeof request.filter === 'string') {
      const filter = parseFilter(request.filter);
      deleted = store?.deleteWhere((record) => filter(record.metadata)) ?? 0;
    } else throw badRequest('delete needs ids, a prefix or a filter');
  } else {
    deleted = store?.delete(parseIds(body)) ?? 0;
  }
  if (deleted > 0) state.changed(namespace);
  return { deleted };
};

const range: Command = ({ state, namespace, body }) => {
  const request = asObject(body, 'range');
  const cursor = parseCursor(request.cursor);
  const limit = request.limit;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > maxRangeLimit) {
    throw badRequest(`limit must be an integer between 1 and ${maxRangeLimit}`);
  }
  if (request.prefix !== undefined && request.prefix !== null && typeof request.prefix !== 'string') {
    throw badRequest('prefix must be a string');
  }
  const includes = parseIncludes(request);
  const page = state.get(namespace)?.range(cursor, limit, request.prefix ?? undefined) ?? { nextCursor: '', records: [] };
  return { nextCursor: page.nextCursor, vectors: page.records.map((record) => renderVector(record, includes)) };
};

function parseCursor(value: unknown): number {
  if (value === undefined || value === null || value === '') return 0;
  const text = String(value);
  if (!/^\d+$/.test(text))
    throw badRequest(`invalid cursor '${text}': pass "0" to start, then the nextCursor of the previous page`);
  return Number(text);
}

const reset: Command = ({ state, namespace, query }) => {
  if (query.all !== undefined) {
    for (const name of state.names()) state.drop(name);
  } else if (state.get(namespace)) {
    state.get(namespace)!.clear();
    state.changed(namespace);
  }
  return 'Success';
};

const info: Command = ({ state }) => {
  const namespaces: Record<string, { vectorCount: number; pendingVectorCount: number }> = {};
  let vectorCount = 0;
  let indexSize = 0;
  for (const [name, store] of state.entries()) {
    namespaces[name] = { vectorCount: store.size, pendingVectorCount: 0 };
    vectorCount += store.size;
    indexSize += store.byteSize;
  }
  const { indexType, dimension, similarityFunction } = state.shape;
  return {
    vectorCount,
    pendingVectorCount: 0,
    indexSize,
    dimension,
    similarityFunction,
    ...(indexType !== 'SPARSE' ? { denseIndex: { dimension, similarityFunction } } : {}),
    ...(indexType !== 'DENSE' ? { sparseIndex: {} } : {}),
    namespaces,
  };
};

const listNamespaces: Command = ({ state }) => state.names();

const deleteNamespace: Command = ({ state, namespace }) => {
  if (namespace === '') throw badRequest('The default namespace cannot be deleted');
  if (!state.get(namespace)) throw new VectorError(404, `Namespace ${namespace} for the index devstack does not exist`);
  state.drop(namespace);
  return 'Success';
};

const resumableStart: Command = ({ state, namespace, body }) => {
  const request = asObject(body, 'resumable-query');
  const maxIdle = request.maxIdle;
  if (typeof maxIdle !== 'number' || !(maxIdle > 0)) throw badRequest('maxIdle must be a positive number of seconds');
  const parsed = parseQuery(request, state.shape);
  const scores = renderScored(state.get(namespace)?.query(parsed) ?? [], parsed);
  const uuid = state.resumable.start({ namespace, query: parsed, served: parsed.topK, maxIdleMs: maxIdle * 1000 });
  return { uuid, scores };
};

/** The next results of a resumable query: the query is run again, deeper, and the new tail returned. */
const resumableNext: Command = ({ state, body }) => {
  const request = asObject(body, 'resumable-query-next');
  const additionalK = request.additionalK;
  if (typeof additionalK !== 'number' || !Number.isInteger(additionalK) || additionalK < 1) {
    throw badRequest('additionalK must be a positive integer');
  }
  const session = state.resumable.get(String(request.uuid));
  const deeper = { ...session.query, topK: session.served + additionalK };
  const results = state.get(session.namespace)?.query(deeper) ?? [];
  const next = renderScored(results.slice(session.served), deeper);
  session.served += additionalK;
  return next;
};

const resumableEnd: Command = ({ state, body }) => {
  state.resumable.end(String(asObject(body, 'resumable-query-end').uuid));
  return 'Success';
};

/** The REST commands, by their path's first segment. */
export const commands: Record<string, { run: Command; writes: boolean }> = {
  upsert: { run: upsert, writes: true },
  'upsert-data': { run: noEmbeddingModel, writes: true },
  update: { run: update, writes: true },
  query: { run: query, writes: false },
  'query-data': { run: noEmbeddingModel, writes: false },
  'resumable-query-data': { run: noEmbeddingModel, writes: false },
  'resumable-query': { run: resumableStart, writes: false },
  'resumable-query-next': { run: resumableNext, writes: false },
  'resumable-query-end': { run: resumableEnd, writes: false },
  fetch: { run: fetchVectors, writes: false },
  delete: { run: deleteVectors, writes: true },
  range: { run: range, writes: false },
  reset: { run: reset, writes: true },
  info: { run: info, writes: false },
  'list-namespaces': { run: listNamespaces, writes: false },
  'delete-namespace': { run: deleteNamespace, writes: true },
};
