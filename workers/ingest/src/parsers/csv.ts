import { ParseBudget } from './budget.ts';
import { SheetRows } from './table-rows.ts';
import { decodeTextFile, truncationWarning } from './text.ts';
import { DEFAULT_PARSE_LIMITS, type ParsedDocument, ParseError, type ParseLimits } from './types.ts';

/**
 * CSV as spreadsheet programs write it: any common encoding (UTF-8 with or without BOM,
 * UTF-16 from "Unicode text" exports, windows-1252 from older Excel), a delimiter found
 * from the data, RFC 4180 quoting. Rows become header-keyed blocks, as for XLSX.
 */

export const CSV_DELIMITERS = [',', ';', '\t', '|'] as const;
export type CsvDelimiter = (typeof CSV_DELIMITERS)[number];

/** Cells read before the rest of the file is dropped with a warning (as for XLSX). */
export const MAX_CSV_CELLS = 200_000;
/** Fields kept of one record, as many as a spreadsheet has columns; the rest are skipped unread. */
export const MAX_CSV_FIELDS = 16_384;

const SAMPLE_CHARS = 64 * 1024;
const SAMPLE_RECORDS = 50;

export function parseCsv(bytes: Uint8Array, limits: ParseLimits = DEFAULT_PARSE_LIMITS): ParsedDocument {
  const { text, truncated } = decodeTextFile(bytes, true);
  if (text.trim() === '') throw new ParseError('empty', 'The document is empty');
  const delimiter = detectDelimiter(text);
  const budget = new ParseBudget(limits);
  const rows = new SheetRows(budget, {}, 1);
  const warnings = truncated ? [truncationWarning()] : [];
  const fields = { max: MAX_CSV_FIELDS, cut: false };
  let cells = 0;
  let index = 0;
  budget.until(() => {
    for (const record of csvRecords(text, delimiter, fields)) {
      const row: [number, string][] = [];
      record.forEach((field, column) => {
        if (field.trim() !== '') row.push([column, field]);
      });
      cells += row.length;
      if (cells > MAX_CSV_CELLS) {
        warnings.push(`The file has more than ${MAX_CSV_CELLS} cells; only the first ${MAX_CSV_CELLS} were read`);
        break;
      }
      rows.row(index++, row);
    }
  });
  if (fields.cut)
    warnings.push(`A record has more than ${MAX_CSV_FIELDS} fields; only the first ${MAX_CSV_FIELDS} of each were read`);
  const blocks = rows.finish();
  if (blocks.length === 0) throw new ParseError('empty', 'The document is empty');
  return budget.finish({ blocks, images: [], warnings });
}

/**
 * The delimiter that splits the first records into the most consistent number of fields
 * (at least two); ties go to the one giving more fields, then to the comma.
 */
export function detectDelimiter(text: string): CsvDelimiter {
  const sample = text.length > SAMPLE_CHARS ? text.slice(0, SAMPLE_CHARS) : text;
  const partial = sample.length < text.length;
  let best: { delimiter: CsvDelimiter; consistency: number; fields: number } = { delimiter: ',', consistency: 0, fields: 1 };
  for (const delimiter of CSV_DELIMITERS) {
    const counts: number[] = [];
    for (const record of csvRecords(sample, delimiter)) {
      if (record.length === 1 && record[0]!.trim() === '') continue;
      counts.push(record.length);
      if (counts.length > SAMPLE_RECORDS) break;
    }
    // The last record of a cut sample may be cut too.
    if (partial && counts.length > 1) counts.pop();
    const tally = new Map<number, number>();
    for (const n of counts) tally.set(n, (tally.get(n) ?? 0) + 1);
    let fields = 1;
    let hits = 0;
    for (const [n, count] of tally) {
      if (count > hits || (count === hits && n > fields)) {
        fields = n;
        hits = count;
      }
    }
    if (fields < 2 || counts.length === 0) continue;
    const consistency = hits / counts.length;
    if (consistency > best.consistency || (consistency === best.consistency && fields > best.fields)) {
      best = { delimiter, consistency, fields };
    }
  }
  return best.delimiter;
}

/**
 * RFC 4180 records; lenient where files are not (a stray quote inside a bare field is kept as text).
 * A record keeps at most `fields.max` fields: the rest are scanned past without being kept, and
 * `fields.cut` says so.
 */
export function* csvRecords(
  text: string,
  delimiter: string,
  fields: { max: number; cut: boolean } = { max: Number.POSITIVE_INFINITY, cut: false },
): Generator<string[]> {
  const d = delimiter.charCodeAt(0);
  const n = text.length;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  while (i < n) {
    const record: string[] = [];
    for (;;) {
      let field = '';
      if (text.charCodeAt(i) === 34 /* " */) {
        i++;
        for (;;) {
          const q = text.indexOf('"', i);
          if (q === -1) {
            // Unterminated quote: the rest of the file is this field.
            field += text.slice(i);
            i = n;
            break;
          }
          field += text.slice(i, q);
          i = q + 1;
          if (text.charCodeAt(i) === 34) {
            field += '"';
            i++;
          } else {
            break;
          }
        }
        // Anything between the closing quote and the delimiter is kept, as spreadsheets do.
        const tail = fieldEnd(text, i, d);
        field += text.slice(i, tail);
        i = tail;
      } else {
        const j = fieldEnd(text, i, d);
        field = text.slice(i, j);
        i = j;
      }
      if (record.length < fields.max) record.push(field);
      else fields.cut = true;
      if (i >= n) break;
      const c = text.charCodeAt(i);
      if (c === d) {
        i++;
        // A delimiter at the very end still opens an (empty) last field.
        if (i >= n && record.length < fields.max) record.push('');
        if (i >= n) break;
        continue;
      }
      if (c === 13 && text.charCodeAt(i + 1) === 10) i += 2;
      else i++;
      break;
    }
    yield record;
  }
}

/** Where an unquoted stretch of a field ends: at the delimiter, a line break or the end. */
function fieldEnd(text: string, from: number, delimiter: number): number {
  let j = from;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c === delimiter || c === 10 || c === 13) break;
    j++;
  }
  return j;
}
