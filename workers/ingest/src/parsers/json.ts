import { MAX_JSON_DEPTH, scanJsonValue } from '#core/documents/json-shape.ts';
import { ParseBudget } from './budget.ts';
import { cleanCell } from './table-rows.ts';
import { decodeTextFile } from './text.ts';
import { type Block, DEFAULT_PARSE_LIMITS, type ParsedDocument, ParseError, type ParseLimits } from './types.ts';

/**
 * JSON and JSON Lines as readable text. An object's nested objects and arrays of objects go under
 * headings named by their field paths (`metadata.coordinates`); a record (an element of an array of
 * objects, a line of JSON Lines) becomes one block of "field: value; nested.field: value", which the
 * chunker keeps whole when it fits a chunk, as it keeps a table row. A record too long for that is
 * read as an object under a heading of its own path.
 */

/**
 * A JSON file is parsed whole (JSON.parse), which takes several times the file's size (an 8 MB array
 * of small records peaked at 108 MiB, docs/benchmarks.md); past this it is refused, and JSON Lines,
 * read a line at a time, is the way to send more.
 */
export const MAX_JSON_BYTES = 5 * 1024 * 1024;
/** JSON Lines read at most, cut at a line's end: 15 MB of small records peaked at 134 MiB, their blocks and chunks held together. */
export const MAX_JSONL_BYTES = 8 * 1024 * 1024;
/** A record whose text is longer than this is read field by field under its own heading. */
export const MAX_RECORD_CHARS = 2_000;
/** A list of plain values is one line up to this length, else one item per value. */
const MAX_INLINE_LIST_CHARS = 500;
const HEADING_LEVELS = 6;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const NOT_JSON = 'The file is not valid JSON';
const TOO_DEEP = `The JSON is nested more than ${MAX_JSON_DEPTH} levels deep and cannot be read`;

export function parseJson(bytes: Uint8Array, limits: ParseLimits = DEFAULT_PARSE_LIMITS): ParsedDocument {
  if (bytes.byteLength > MAX_JSON_BYTES) {
    throw new ParseError(
      'too_large',
      `The JSON file is larger than ${MAX_JSON_BYTES / 2 ** 20} MB; save it as JSON Lines (one record per line) to have it read`,
    );
  }
  const { text } = decodeTextFile(bytes, false);
  const value = parseChecked(text, NOT_JSON);
  const budget = new ParseBudget(limits);
  const blocks: Block[] = [];
  budget.until(() => readValue(value, '', 1, blocks, budget));
  if (blocks.length === 0) throw new ParseError('empty', 'The document is empty');
  return budget.finish({ blocks, images: [], warnings: [] });
}

export function parseJsonLines(bytes: Uint8Array, limits: ParseLimits = DEFAULT_PARSE_LIMITS): ParsedDocument {
  const cut = bytes.byteLength > MAX_JSONL_BYTES ? bytes.lastIndexOf(0x0a, MAX_JSONL_BYTES - 1) + 1 : bytes.byteLength;
  // A UTF-16 file is cut by decodeTextFile instead, where no half character is left.
  const utf16 = (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff);
  const read = cut > 0 && !utf16 ? bytes.subarray(0, cut) : bytes;
  const decoded = decodeTextFile(read, false);
  const text = decoded.text;
  const truncated = decoded.truncated || read.byteLength < bytes.byteLength;
  const budget = new ParseBudget(limits);
  const blocks: Block[] = [];
  const warnings = truncated ? [`Only the first ${MAX_JSONL_BYTES / 2 ** 20} MB of the file were read`] : [];
  let invalid = 0;
  budget.until(() => {
    let line = 0;
    for (let start = 0; start < text.length; line++) {
      const end = text.indexOf('\n', start);
      const raw = text.slice(start, end === -1 ? text.length : end);
      start = end === -1 ? text.length : end + 1;
      budget.work();
      if (raw.trim() === '') continue;
      let record: Json;
      try {
        record = parseChecked(raw, NOT_JSON);
      } catch (error) {
        // The last line of a file cut short may be cut too; any other bad line is counted.
        if (!(truncated && start >= text.length)) invalid++;
        if (error instanceof ParseError && error.message === TOO_DEEP && invalid === 1) warnings.push(TOO_DEEP);
        continue;
      }
      readRecord(record, `Line ${line + 1}`, 1, blocks, budget);
    }
  });
  if (invalid > 0) {
    warnings.push(
      `${invalid} line${invalid === 1 ? ' was' : 's were'} not valid JSON and ${invalid === 1 ? 'was' : 'were'} skipped`,
    );
  }
  if (blocks.length === 0)
    throw new ParseError(invalid > 0 ? 'corrupt' : 'empty', invalid > 0 ? NOT_JSON : 'The document is empty');
  return budget.finish({ blocks, images: [], warnings: [...new Set(warnings)] });
}

/** JSON.parse, once the text is known to be one value no deeper than MAX_JSON_DEPTH (JSON.parse itself has no limit). */
function parseChecked(text: string, invalid: string): Json {
  const scan = scanJsonValue(text, 0, MAX_JSON_DEPTH);
  if (scan.status === 'too_deep') throw new ParseError('corrupt', TOO_DEEP);
  if (scan.status !== 'ok' || text.slice(scan.end).trim() !== '') throw new ParseError('corrupt', invalid);
  try {
    return JSON.parse(text) as Json;
  } catch {
    throw new ParseError('corrupt', invalid);
  }
}

const isObject = (value: Json): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
const isPlain = (value: Json) => value === null || typeof value !== 'object';
const plain = (value: Json) => cleanCell(value === null ? 'null' : String(value));
const join = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);

function heading(text: string, level: number, blocks: Block[], budget: ParseBudget): void {
  blocks.push({ kind: 'heading', text: budget.take(text), level: Math.min(level, HEADING_LEVELS) });
}

function push(kind: Block['kind'], text: string, blocks: Block[], budget: ParseBudget): void {
  if (text === '') return;
  const kept = budget.take(text);
  if (kept !== '') blocks.push({ kind, text: kept });
}

/** Any value at `path`, its headings from `level`. */
function readValue(value: Json, path: string, level: number, blocks: Block[], budget: ParseBudget): void {
  budget.work();
  if (isPlain(value)) {
    push('paragraph', path === '' ? plain(value) : `${path}: ${plain(value)}`, blocks, budget);
    return;
  }
  if (Array.isArray(value)) {
    readArray(value, path, level, blocks, budget);
    return;
  }
  readObject(value, path, level, blocks, budget);
}

function readObject(object: JsonObject, path: string, level: number, blocks: Block[], budget: ParseBudget): void {
  // Plain fields first, as the object's own lines; then its parts under their headings.
  const nested: [string, Json][] = [];
  for (const [key, value] of Object.entries(object)) {
    budget.work();
    if (isPlain(value)) push('paragraph', `${key}: ${plain(value)}`, blocks, budget);
    else if (Array.isArray(value) && value.every(isPlain)) readPlainList(value, key, blocks, budget);
    else nested.push([key, value]);
  }
  for (const [key, value] of nested) {
    const child = join(path, key);
    heading(child, level, blocks, budget);
    readValue(value, child, level + 1, blocks, budget);
  }
}

function readArray(array: Json[], path: string, level: number, blocks: Block[], budget: ParseBudget): void {
  if (array.every(isPlain)) {
    readPlainList(array, path.slice(path.lastIndexOf('.') + 1), blocks, budget);
    return;
  }
  array.forEach((item, i) => {
    readRecord(item, `${path}[${i}]`, level, blocks, budget);
  });
}

/** A list of plain values: on one line when short, else an item per value. */
function readPlainList(values: Json[], name: string, blocks: Block[], budget: ParseBudget): void {
  const texts = values.map(plain).filter((text) => text !== '');
  if (texts.length === 0) return;
  const line = texts.join(', ');
  if (line.length <= MAX_INLINE_LIST_CHARS) {
    push('paragraph', name ? `${name}: ${line}` : line, blocks, budget);
    return;
  }
  if (name) heading(name, HEADING_LEVELS, blocks, budget);
  for (const text of texts) push('list_item', text, blocks, budget);
}

/** One record as one block when it is short enough, else as an object under its own path. */
function readRecord(record: Json, path: string, level: number, blocks: Block[], budget: ParseBudget): void {
  budget.work();
  if (!isObject(record) && !Array.isArray(record)) {
    push('paragraph', plain(record), blocks, budget);
    return;
  }
  const parts: string[] = [];
  if (flatten(record, '', parts, { chars: 0 }, budget)) {
    push('paragraph', parts.join('; '), blocks, budget);
    return;
  }
  heading(path, level, blocks, budget);
  readValue(record, path, level + 1, blocks, budget);
}

/** "field: value" parts of a record, nested fields by their paths; false once they pass MAX_RECORD_CHARS. */
function flatten(value: Json, path: string, parts: string[], length: { chars: number }, budget: ParseBudget): boolean {
  budget.work();
  const add = (part: string) => {
    length.chars += part.length + 2;
    parts.push(part);
    return length.chars <= MAX_RECORD_CHARS;
  };
  if (isPlain(value)) {
    const text = plain(value);
    return text === '' || add(path === '' ? text : `${path}: ${text}`);
  }
  if (Array.isArray(value)) {
    if (value.every(isPlain)) {
      const texts = value.map(plain).filter((text) => text !== '');
      return texts.length === 0 || add(path === '' ? texts.join(', ') : `${path}: ${texts.join(', ')}`);
    }
    return value.every((item, i) => flatten(item, `${path}[${i}]`, parts, length, budget));
  }
  return Object.entries(value).every(([key, child]) => flatten(child, join(path, key), parts, length, budget));
}
