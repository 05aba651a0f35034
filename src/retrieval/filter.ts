import { isUuid } from '#core/db/client.ts';
import {
  MAX_FILTER_BYTES,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_DEPTH,
  MAX_FILTER_IN_VALUES,
  MAX_METADATA_STRING_LENGTH,
} from '#core/limits.ts';
import { METADATA_KEY } from './document-facets.ts';

/**
 * The search filter language (issue 22): JSON in, Upstash Vector's filter string out.
 *
 *   filter  := { field: value } | { field: { op: operand, … } } | { and: [filter, …] } | { or: [filter, …] } | { not: filter }
 *   field   := document_id | type | source | uploaded_at | metadata.<key>
 *   op      := eq | ne | in | nin | gt | gte | lt | lte | contains
 *
 * Several entries in one object must all hold. A filter is checked whole before anything is sent: fields
 * are a fixed set or a metadata key of METADATA_KEY's identifier characters, so no key carries syntax;
 * every value becomes a literal (numbers as numbers, strings quoted and escaped), so no user text does.
 * `not` is pushed down to the comparisons (De Morgan), since Upstash has no general negation: a negated
 * comparison holds where the field is missing or holds a value failing it (`!=`, `NOT IN`, … `OR HAS NOT FIELD`).
 */

export type Scalar = string | number | boolean;
type Op = 'eq' | 'in' | 'gt' | 'gte' | 'lt' | 'lte' | 'contains';

/** One comparison on a path of the vector's metadata, maybe negated. */
export interface Comparison {
  path: string;
  op: Op;
  value: Scalar | Scalar[];
  negated: boolean;
}

/** A filter as checked: negations pushed into the comparisons. */
export type FilterNode = Comparison | { all: FilterNode[] } | { any: FilterNode[] };

export type FilterParse = { ok: true; filter: FilterNode } | { ok: false; path: (string | number)[]; message: string };

/** What a field holds, which decides the operators and values it takes. */
type FieldKind = 'uuid' | 'text' | 'date' | 'metadata';

const BUILT_IN: Record<string, { path: string; kind: FieldKind }> = {
  document_id: { path: 'document_id', kind: 'uuid' },
  type: { path: 'doc_type', kind: 'text' },
  source: { path: 'source', kind: 'text' },
  uploaded_at: { path: 'uploaded_at', kind: 'date' },
};

export const FILTER_FIELDS = [...Object.keys(BUILT_IN), 'metadata.<key>'];

const OPERATORS = ['eq', 'ne', 'in', 'nin', 'gt', 'gte', 'lt', 'lte', 'contains'] as const;
type UserOp = (typeof OPERATORS)[number];

const OPS_BY_KIND: Record<FieldKind, readonly UserOp[]> = {
  uuid: ['eq', 'ne', 'in', 'nin'],
  text: ['eq', 'ne', 'in', 'nin'],
  date: ['gt', 'gte', 'lt', 'lte'],
  metadata: OPERATORS,
};

/** A source is a file name or a URL (up to 2048 characters); other strings are metadata values. */
const MAX_SOURCE_LENGTH = 2048;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this refuses
const CONTROL = /[\u0000-\u001f\u007f]/;
/** An ISO 8601 date, optionally with a time and zone: what `uploaded_at` is compared with. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

class Rejected {
  constructor(
    readonly path: (string | number)[],
    readonly message: string,
  ) {}
}

/** Checks a filter as the client sent it (parsed JSON) and returns its checked form, or where it is wrong. */
export function parseFilter(raw: unknown): FilterParse {
  let size: number;
  try {
    size = new TextEncoder().encode(JSON.stringify(raw)).length;
  } catch {
    return { ok: false, path: [], message: 'The filter could not be read as JSON' };
  }
  if (size > MAX_FILTER_BYTES) return { ok: false, path: [], message: `The filter is over ${MAX_FILTER_BYTES} bytes as JSON` };
  const counter = { conditions: 0 };
  try {
    return { ok: true, filter: node(raw, [], 1, false, counter) };
  } catch (error) {
    if (error instanceof Rejected) return { ok: false, path: error.path, message: error.message };
    throw error;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function node(
  raw: unknown,
  at: (string | number)[],
  depth: number,
  negated: boolean,
  counter: { conditions: number },
): FilterNode {
  if (depth > MAX_FILTER_DEPTH) throw new Rejected(at, `Filters may nest at most ${MAX_FILTER_DEPTH} deep`);
  if (!isPlainObject(raw))
    throw new Rejected(at, 'Expected an object: {field: value}, {and: [...]}, {or: [...]} or {not: {...}}');
  const entries = Object.entries(raw);
  if (entries.length === 0) throw new Rejected(at, 'An empty filter matches nothing in particular; leave it out instead');
  const parts: FilterNode[] = [];
  for (const [key, value] of entries) {
    const here = [...at, key];
    if (key === 'and' || key === 'or') {
      if (!Array.isArray(value) || value.length === 0) throw new Rejected(here, `"${key}" takes a non-empty list of filters`);
      const children = value.map((child, i) => node(child, [...here, i], depth + 1, negated, counter));
      // not (a and b) = (not a) or (not b), and the other way round.
      parts.push((key === 'and') !== negated ? { all: children } : { any: children });
    } else if (key === 'not') {
      parts.push(node(value, here, depth + 1, !negated, counter));
    } else {
      parts.push(...conditions(key, value, here, negated, counter));
    }
  }
  if (parts.length === 1) return parts[0] as FilterNode;
  return negated ? { any: parts } : { all: parts };
}

function fieldOf(key: string, at: (string | number)[]): { path: string; kind: FieldKind } {
  const builtIn = Object.hasOwn(BUILT_IN, key) ? BUILT_IN[key] : undefined;
  if (builtIn) return builtIn;
  if (key.startsWith('metadata.') && METADATA_KEY.test(key.slice('metadata.'.length))) return { path: key, kind: 'metadata' };
  throw new Rejected(
    at,
    `Unknown field; fields are ${Object.keys(BUILT_IN).join(', ')}, and metadata.<key> where the key is letters, digits and _ (not starting with a digit, at most 64)`,
  );
}

function conditions(key: string, raw: unknown, at: (string | number)[], negated: boolean, counter: { conditions: number }) {
  const field = fieldOf(key, at);
  const ops: [string, unknown][] = isPlainObject(raw) ? Object.entries(raw) : [['eq', raw]];
  if (ops.length === 0) throw new Rejected(at, 'Expected a value or an object of operators');
  return ops.map(([name, operand]): Comparison => {
    const here = isPlainObject(raw) ? [...at, name] : at;
    counter.conditions++;
    if (counter.conditions > MAX_FILTER_CONDITIONS) {
      throw new Rejected(here, `A filter may hold at most ${MAX_FILTER_CONDITIONS} comparisons`);
    }
    if (!(OPERATORS as readonly string[]).includes(name)) {
      throw new Rejected(here, `Unknown operator; operators are ${OPERATORS.join(', ')}`);
    }
    const op = name as UserOp;
    if (!OPS_BY_KIND[field.kind].includes(op)) {
      throw new Rejected(here, `"${key}" takes ${OPS_BY_KIND[field.kind].join(', ')}`);
    }
    const flips = op === 'ne' || op === 'nin';
    const base: Op = op === 'ne' ? 'eq' : op === 'nin' ? 'in' : op;
    return { path: field.path, op: base, value: operandOf(field.kind, base, operand, here), negated: negated !== flips };
  });
}

function operandOf(kind: FieldKind, op: Op, raw: unknown, at: (string | number)[]): Scalar | Scalar[] {
  if (op === 'in') {
    if (!Array.isArray(raw) || raw.length === 0) throw new Rejected(at, 'Expected a non-empty list of values');
    if (raw.length > MAX_FILTER_IN_VALUES) throw new Rejected(at, `A list may hold at most ${MAX_FILTER_IN_VALUES} values`);
    return raw.map((item, i) => scalar(kind, op, item, [...at, i]));
  }
  return scalar(kind, op, raw, at);
}

function scalar(kind: FieldKind, op: Op, raw: unknown, at: (string | number)[]): Scalar {
  if (kind === 'uuid') {
    if (typeof raw !== 'string' || !isUuid(raw)) throw new Rejected(at, 'Expected a document id (a UUID)');
    return raw.toLowerCase();
  }
  if (kind === 'date') {
    const time = typeof raw === 'string' && ISO_DATE.test(raw) ? Date.parse(raw) : Number.NaN;
    if (!Number.isFinite(time)) throw new Rejected(at, 'Expected an ISO 8601 date, such as 2026-11-27 or 2026-11-27T09:30:00Z');
    return time;
  }
  if (op === 'gt' || op === 'gte' || op === 'lt' || op === 'lte') {
    if (typeof raw !== 'number' || !Number.isFinite(raw)) throw new Rejected(at, 'Expected a number');
    return raw;
  }
  if (typeof raw === 'string') {
    const max = kind === 'text' ? MAX_SOURCE_LENGTH : MAX_METADATA_STRING_LENGTH;
    if (raw.length > max) throw new Rejected(at, `Strings may be at most ${max} characters`);
    if (CONTROL.test(raw)) throw new Rejected(at, 'Strings must not contain control characters');
    return raw;
  }
  if (kind === 'text' || op === 'contains') throw new Rejected(at, 'Expected a string');
  if (typeof raw === 'boolean') return raw;
  if (typeof raw === 'number' && Number.isFinite(raw)) return raw;
  throw new Rejected(at, 'Expected a string, a number or a boolean');
}

/** The filter in Upstash Vector's language: fields from the fixed set, every value a literal. */
export function toUpstashFilter(filter: FilterNode): string {
  if ('all' in filter) return filter.all.map((child) => grouped(child)).join(' AND ');
  if ('any' in filter) return filter.any.map((child) => grouped(child)).join(' OR ');
  return comparison(filter);
}

const grouped = (child: FilterNode) => (`all` in child || 'any' in child ? `(${toUpstashFilter(child)})` : comparison(child));

const NEGATED: Record<Exclude<Op, 'eq' | 'in' | 'contains'>, string> = { gt: '<=', gte: '<', lt: '>=', lte: '>' };
const PLAIN: Record<Exclude<Op, 'eq' | 'in' | 'contains'>, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

function comparison({ path, op, value, negated }: Comparison): string {
  let test: string;
  if (op === 'in') test = `${path} ${negated ? 'NOT IN' : 'IN'} (${(value as Scalar[]).map(literal).join(', ')})`;
  else if (op === 'eq') test = `${path} ${negated ? '!=' : '='} ${literal(value as Scalar)}`;
  else if (op === 'contains') test = `${path} ${negated ? 'NOT CONTAINS' : 'CONTAINS'} ${literal(value as Scalar)}`;
  else test = `${path} ${(negated ? NEGATED : PLAIN)[op]} ${literal(value as Scalar)}`;
  return negated ? `(${test} OR HAS NOT FIELD ${path})` : test;
}

/**
 * A value as a literal. Strings are single-quoted with backslashes and single quotes escaped by a
 * backslash, the grammar devstack/vector/filter.ts reads; control characters were refused by parseFilter.
 */
export function literal(value: Scalar): string {
  if (typeof value === 'string') return `'${value.replace(/[\\']/g, '\\$&')}'`;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('A filter number must be finite');
    return String(value);
  }
  return value ? 'true' : 'false';
}

/**
 * Whether a record shaped like a vector's metadata (document-facets.ts) passes the filter, with the
 * semantics of the Upstash filter toUpstashFilter writes: what the documents list filters by.
 */
export function matchesFilter(filter: FilterNode, record: Record<string, unknown>): boolean {
  if ('all' in filter) return filter.all.every((child) => matchesFilter(child, record));
  if ('any' in filter) return filter.any.some((child) => matchesFilter(child, record));
  const value = read(record, filter.path);
  if (filter.negated && value === undefined) return true;
  const isScalar = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
  switch (filter.op) {
    case 'eq':
      return isScalar && equals(value, filter.value as Scalar) !== filter.negated;
    case 'in':
      return isScalar && (filter.value as Scalar[]).some((item) => equals(value, item)) !== filter.negated;
    case 'contains':
      return Array.isArray(value) && value.some((item) => equals(item, filter.value as Scalar)) !== filter.negated;
    default: {
      if (typeof value !== 'number') return false;
      const bound = filter.value as number;
      const holds =
        filter.op === 'gt'
          ? value > bound
          : filter.op === 'gte'
            ? value >= bound
            : filter.op === 'lt'
              ? value < bound
              : value <= bound;
      return holds !== filter.negated;
    }
  }
}

/** Upstash's docs spell boolean literals as 1 and 0 too: `flag = 1` matches true. */
function equals(value: unknown, literal: Scalar): boolean {
  if (typeof value === 'boolean' && typeof literal === 'number') return (literal === 1 && value) || (literal === 0 && !value);
  return value === literal;
}

function read(record: Record<string, unknown>, path: string): unknown {
  const dot = path.indexOf('.');
  if (dot < 0) return Object.hasOwn(record, path) ? record[path] : undefined;
  const inner = record[path.slice(0, dot)];
  if (!isPlainObject(inner)) return undefined;
  const key = path.slice(dot + 1);
  return Object.hasOwn(inner, key) ? inner[key] : undefined;
}
