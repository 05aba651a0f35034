import { z } from '@hono/zod-openapi';
import { invalid } from '#core/errors.ts';
import {
  MAX_FILTER_BYTES,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_DEPTH,
  MAX_FILTER_IN_VALUES,
  MAX_METADATA_BYTES,
  MAX_METADATA_KEY_LENGTH,
  MAX_METADATA_KEYS,
  MAX_METADATA_LIST_ITEMS,
  MAX_METADATA_STRING_LENGTH,
} from '#core/limits.ts';
import { type DocumentMetadata, METADATA_KEY } from '#retrieval/document-facets.ts';
import { type FilterNode, parseFilter } from '#retrieval/filter.ts';

// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this refuses
const NO_CONTROLS = /^[^\u0000-\u001f\u007f]*$/;

const metadataString = z
  .string()
  .max(MAX_METADATA_STRING_LENGTH)
  .regex(NO_CONTROLS, 'Must not contain control characters (NUL, tabs, line breaks and the like)');

const METADATA_RULES = `A flat JSON object: at most ${MAX_METADATA_KEYS} keys, each letters, digits and \`_\` (not starting with a
digit, at most ${MAX_METADATA_KEY_LENGTH} characters); values are strings (at most ${MAX_METADATA_STRING_LENGTH} characters, no
control characters), finite numbers, booleans, or lists of at most ${MAX_METADATA_LIST_ITEMS} such strings. No nested objects, no
null. At most ${MAX_METADATA_BYTES} bytes as JSON. Past any of these: 422. Every chunk's vector carries a copy, which
\`filter\` selects on as \`metadata.<key>\`.`;

export const MetadataSchema = z
  .record(
    z.string(),
    z.union([metadataString, z.number().finite(), z.boolean(), z.array(metadataString).max(MAX_METADATA_LIST_ITEMS)]),
  )
  .superRefine((metadata, context) => {
    const keys = Object.keys(metadata);
    if (keys.length > MAX_METADATA_KEYS) context.addIssue({ code: 'custom', message: `At most ${MAX_METADATA_KEYS} keys` });
    for (const key of keys) {
      if (!METADATA_KEY.test(key)) {
        context.addIssue({
          code: 'custom',
          path: [key],
          message: `Keys are letters, digits and _, not starting with a digit, at most ${MAX_METADATA_KEY_LENGTH} characters`,
        });
      }
    }
    if (new TextEncoder().encode(JSON.stringify(metadata)).length > MAX_METADATA_BYTES) {
      context.addIssue({ code: 'custom', message: `At most ${MAX_METADATA_BYTES} bytes as JSON` });
    }
  })
  .openapi('DocumentMetadata', {
    description: METADATA_RULES,
    example: { company: 'Acme', year: 2025, audited: true, tags: ['annual', 'finance'] },
  });

/**
 * An upload's `metadata` form field: JSON text, checked as the JSON body's would be. Its errors name
 * the field, as the body's validation does.
 */
export function parseMetadataField(text: string | undefined): DocumentMetadata | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw invalid('metadata', 'The metadata field must be a JSON object', 'json_invalid');
  }
  const checked = MetadataSchema.safeParse(raw);
  if (checked.success) return checked.data;
  const issue = checked.error.issues[0];
  const where = issue?.path.length ? ` (at ${issue.path.join('.')})` : '';
  throw invalid('metadata', `${issue?.message ?? 'Invalid metadata'}${where}`);
}

export const FILTER_DESCRIPTION = `Only passages of documents that match. A JSON object:
\`{"<field>": value}\` (equality), \`{"<field>": {"<op>": operand, …}}\`, \`{"and": [filter, …]}\`, \`{"or": [filter, …]}\`,
\`{"not": filter}\`; several entries in one object must all hold. Fields: \`document_id\` (a UUID), \`type\` (\`pdf\`, \`docx\`,
\`pptx\`, \`xlsx\`, \`odt\`, \`ods\`, \`odp\`, \`epub\`, \`csv\`, \`txt\`, \`md\`, \`html\`, \`json\`, \`jsonl\`, \`eml\`, \`png\`,
\`jpeg\`, \`webp\`), \`source\` (the file name, or the URL of a web page), \`uploaded_at\` (ISO 8601
dates, ranges only) and \`metadata.<key>\` (what was attached at upload or by PATCH). Operators: \`eq\`, \`ne\`, \`in\`, \`nin\`
(a list), \`gt\`, \`gte\`, \`lt\`, \`lte\` (numbers; dates for \`uploaded_at\`) and \`contains\` (a list-valued metadata key holds
the string). \`ne\`, \`nin\` and \`not\` also match documents without the field. At most ${MAX_FILTER_DEPTH} levels deep,
${MAX_FILTER_CONDITIONS} comparisons, ${MAX_FILTER_IN_VALUES} values in a list and ${MAX_FILTER_BYTES} bytes as JSON; otherwise 422
naming where. Chunks indexed before metadata existed carry none until the document is PATCHed or re-chunked.`;

const checkFilter = (raw: unknown, context: z.RefinementCtx) => {
  const parsed = parseFilter(raw);
  if (!parsed.ok) context.addIssue({ code: 'custom', path: parsed.path, message: parsed.message });
};

/** A body's `filter`: checked here, so a bad one is a 422 with `loc` naming where in it. */
export const FilterSchema = z
  .record(z.string(), z.unknown())
  .superRefine(checkFilter)
  .openapi('Filter', {
    description: FILTER_DESCRIPTION,
    example: { and: [{ 'metadata.company': 'Acme' }, { 'metadata.year': { gte: 2024 } }, { type: { in: ['pdf', 'xlsx'] } }] },
  });

/** The documents list's `filter` query parameter: the same language, as JSON text. */
export const FilterQueryParam = z
  .string()
  .max(MAX_FILTER_BYTES * 2)
  .superRefine((text, context) => {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      context.addIssue({ code: 'custom', message: 'The filter must be JSON' });
      return;
    }
    checkFilter(raw, context);
  })
  .openapi({
    param: { name: 'filter', in: 'query' },
    description: `The search filter (see \`Filter\`) as JSON text, URL-encoded: only the documents that match. \`limit\` and \`offset\` page the matching ones.`,
    example: '{"metadata.company":"Acme"}',
  });

/** A filter that passed FilterSchema or FilterQueryParam, in its checked form. */
export function checkedFilter(raw: unknown): FilterNode {
  const parsed = parseFilter(typeof raw === 'string' ? JSON.parse(raw) : raw);
  if (!parsed.ok) throw invalid('filter', parsed.message);
  return parsed.filter;
}
