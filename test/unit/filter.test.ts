import { describe, expect, it } from 'vitest';
import { MAX_FILTER_CONDITIONS, MAX_FILTER_DEPTH, MAX_FILTER_IN_VALUES } from '#core/limits.ts';
import { type FilterNode, literal, matchesFilter, parseFilter, toUpstashFilter } from '#retrieval/filter.ts';
import { parseFilter as parseUpstash } from '../../devstack/vector/filter.ts';
import { seededRandom } from '../support/seeded-random.ts';

const ID = '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f';

function checked(raw: unknown): FilterNode {
  const parsed = parseFilter(raw);
  if (!parsed.ok) throw new Error(`refused: ${parsed.message} at ${parsed.path.join('.')}`);
  return parsed.filter;
}

function refusal(raw: unknown) {
  const parsed = parseFilter(raw);
  if (parsed.ok) throw new Error(`accepted: ${toUpstashFilter(parsed.filter)}`);
  return parsed;
}

describe('the filter language', () => {
  it('translates equality, lists, ranges and the built-in fields', () => {
    expect(toUpstashFilter(checked({ 'metadata.company': 'Acme' }))).toBe("metadata.company = 'Acme'");
    expect(toUpstashFilter(checked({ document_id: ID.toUpperCase() }))).toBe(`document_id = '${ID}'`);
    expect(toUpstashFilter(checked({ type: { in: ['pdf', 'md'] }, 'metadata.year': { gte: 2020, lt: 2025 } }))).toBe(
      "doc_type IN ('pdf', 'md') AND metadata.year >= 2020 AND metadata.year < 2025",
    );
    expect(toUpstashFilter(checked({ uploaded_at: { gte: '2026-01-01T00:00:00Z' } }))).toBe(
      `uploaded_at >= ${Date.parse('2026-01-01T00:00:00Z')}`,
    );
    expect(toUpstashFilter(checked({ or: [{ 'metadata.tags': { contains: 'q1' } }, { source: 'a.pdf' }] }))).toBe(
      "metadata.tags CONTAINS 'q1' OR source = 'a.pdf'",
    );
  });

  it('pushes not down to the comparisons, each also matching a missing field', () => {
    expect(toUpstashFilter(checked({ not: { and: [{ 'metadata.a': 1 }, { 'metadata.b': { gt: 2 } }] } }))).toBe(
      '(metadata.a != 1 OR HAS NOT FIELD metadata.a) OR (metadata.b <= 2 OR HAS NOT FIELD metadata.b)',
    );
    expect(toUpstashFilter(checked({ not: { not: { 'metadata.a': true } } }))).toBe('metadata.a = true');
    expect(toUpstashFilter(checked({ 'metadata.a': { nin: ['x'] } }))).toBe(
      "(metadata.a NOT IN ('x') OR HAS NOT FIELD metadata.a)",
    );
  });

  it('escapes every string so that it stays one literal', () => {
    const hostile = [
      "' OR 1=1 OR metadata.x = '",
      '" OR document_id != "',
      'back\\slash\\',
      "\\' OR HAS FIELD text OR '",
      ') OR (1 = 1',
      'ünïcødé 🙂 \u202e gnirts',
      'x'.repeat(512),
    ];
    for (const value of hostile) {
      const filter = toUpstashFilter(checked({ 'metadata.name': value }));
      const predicate = parseUpstash(filter);
      expect(predicate({ metadata: { name: value } }), filter).toBe(true);
      expect(predicate({ metadata: { name: `${value}x` } }), filter).toBe(false);
      expect(predicate({ metadata: { name: 'other' }, text: 'x', document_id: ID }), filter).toBe(false);
    }
    expect(literal("it's")).toBe("'it\\'s'");
  });

  it('refuses keys that are not fields: no key reaches the filter as syntax', () => {
    for (const key of [
      "metadata.a' OR 'x",
      'metadata.a = 1 OR metadata.b',
      'metadata.',
      'metadata.1abc',
      'metadata.a.b',
      'metadata.a[0]',
      'metadata.ä',
      'text',
      'chunk_index',
      'document_id ',
      'AND',
      `metadata.${'a'.repeat(65)}`,
    ]) {
      const parsed = refusal({ [key]: 'x' });
      expect(parsed.path).toEqual([key]);
      expect(parsed.message).toMatch(/Unknown field/);
    }
  });

  it('refuses wrong operators, values and shapes, naming where', () => {
    expect(refusal({ and: [{ 'metadata.a': { like: 'x' } }] }).path).toEqual(['and', 0, 'metadata.a', 'like']);
    expect(refusal({ 'metadata.a': { gt: '5' } }).message).toMatch(/number/);
    expect(refusal({ 'metadata.a': null }).message).toMatch(/string, a number or a boolean/);
    expect(refusal({ 'metadata.a': { eq: { nested: 1 } } }).path).toEqual(['metadata.a', 'eq']);
    expect(refusal({ 'metadata.a': ['x'] }).message).toMatch(/string, a number or a boolean/);
    expect(refusal({ 'metadata.a': 'line\nbreak' }).message).toMatch(/control/);
    expect(refusal({ 'metadata.a': 'x'.repeat(513) }).message).toMatch(/at most 512/);
    expect(refusal({ document_id: "x' OR '1" }).message).toMatch(/UUID/);
    expect(refusal({ uploaded_at: { gt: 'yesterday' } }).message).toMatch(/ISO 8601/);
    expect(refusal({ uploaded_at: '2026-01-01' }).message).toMatch(/takes gt/);
    expect(refusal({ type: { contains: 'pdf' } }).message).toMatch(/takes eq/);
    expect(refusal({}).path).toEqual([]);
    expect(refusal({ or: [] }).path).toEqual(['or']);
    expect(refusal([]).message).toMatch(/Expected an object/);
    expect(refusal({ 'metadata.a': Number.NaN }).message).toMatch(/string, a number/);
  });

  it('refuses past its limits', () => {
    let deep: unknown = { 'metadata.a': 1 };
    for (let i = 0; i < MAX_FILTER_DEPTH; i++) deep = { not: deep };
    expect(refusal(deep).message).toMatch(/nest at most/);
    let veryDeep: unknown = { 'metadata.a': 1 };
    for (let i = 0; i < 100_000; i++) veryDeep = { and: [veryDeep] };
    expect(refusal(veryDeep).message).toMatch(/could not be read|over|nest/);
    const many = { or: Array.from({ length: MAX_FILTER_CONDITIONS + 1 }, (_, i) => ({ 'metadata.a': i })) };
    expect(refusal(many).message).toMatch(/at most 64 comparisons/);
    const long = { 'metadata.a': { in: Array.from({ length: MAX_FILTER_IN_VALUES + 1 }, (_, i) => i) } };
    expect(refusal(long).message).toMatch(/at most 100 values/);
    expect(refusal({ or: Array.from({ length: 40 }, () => ({ 'metadata.a': 'x'.repeat(500) })) }).message).toMatch(/bytes/);
  });

  it('matches records exactly as the translated filter does in the devstack’s Upstash language', () => {
    const random = seededRandom(22);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const values = ['a', 'b', "o'k", 'c\\d', 1, 2, 3.5, true, false];
    const strings = ['a', 'b', "o'k", 'c\\d'];
    const keys = ['metadata.k1', 'metadata.k2', 'type', 'uploaded_at'];
    const leaf = (): unknown => {
      const key = pick(keys);
      if (key === 'type') return { type: random() < 0.5 ? pick(['pdf', 'md']) : { nin: ['pdf', 'csv'] } };
      if (key === 'uploaded_at') return { uploaded_at: { [pick(['gt', 'lte'])]: pick(['2026-01-01', '2026-06-01']) } };
      switch (Math.floor(random() * 5)) {
        case 0:
          return { [key]: pick(values) };
        case 1:
          return { [key]: { ne: pick(values) } };
        case 2:
          return { [key]: { in: [pick(values), pick(values)] } };
        case 3:
          return { [key]: { [pick(['gt', 'gte', 'lt', 'lte'])]: pick([1, 2, 3]) } };
        default:
          return { [key]: { contains: pick(strings) } };
      }
    };
    const tree = (depth: number): unknown => {
      if (depth === 0 || random() < 0.3) return leaf();
      const kind = pick(['and', 'or', 'not']);
      if (kind === 'not') return { not: tree(depth - 1) };
      return { [kind]: [tree(depth - 1), tree(depth - 1)] };
    };
    const record = () => {
      const metadata: Record<string, unknown> = {};
      for (const key of ['k1', 'k2']) {
        const roll = random();
        if (roll < 0.2) continue;
        metadata[key] = roll < 0.4 ? [pick(strings), pick(strings)] : pick(values);
      }
      return {
        document_id: ID,
        ...(random() < 0.8 ? { doc_type: pick(['pdf', 'md', 'csv']) } : {}),
        uploaded_at: Date.parse(pick(['2025-12-01', '2026-03-01', '2026-09-01'])),
        ...(random() < 0.9 ? { metadata } : {}),
      };
    };
    let agreed = 0;
    for (let i = 0; i < 400; i++) {
      const filter = checked(tree(4));
      const upstash = parseUpstash(toUpstashFilter(filter));
      for (let j = 0; j < 10; j++) {
        const r = record();
        expect(matchesFilter(filter, r), `${toUpstashFilter(filter)} on ${JSON.stringify(r)}`).toBe(upstash(r));
        agreed++;
      }
    }
    expect(agreed).toBe(4000);
  });
});
