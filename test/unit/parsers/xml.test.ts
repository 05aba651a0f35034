import { describe, expect, it } from 'vitest';
import { BudgetSpent, ParseBudget } from '../../../workers/ingest/src/parsers/budget.ts';
import { DEFAULT_PARSE_LIMITS, ParseError } from '../../../workers/ingest/src/parsers/types.ts';
import { forEachElement, MAX_TREE_NODES, parseXml, type XmlElement } from '../../../workers/ingest/src/parsers/xml.ts';
import { MAX_XML_DEPTH } from '../../../workers/ingest/src/parsers/xml-scan.ts';

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
const budget = () => new ParseBudget(DEFAULT_PARSE_LIMITS);
const names = (el: XmlElement): string[] => [el.name, ...el.children.flatMap((c) => (typeof c === 'string' ? [] : names(c)))];

describe('the XML scanner', () => {
  it('binds each prefix per element and restores the outer binding when it closes', () => {
    const root = parseXml(
      `<x:doc xmlns:x="${W}"><x:p/><x:inner xmlns:x="${A}"><x:t/></x:inner><x:p/><y:q xmlns:y="${A}" xmlns="${W}"><p/></y:q><z:r/></x:doc>`,
      budget(),
    );
    expect(names(root)).toEqual(['w:doc', 'w:p', 'a:inner', 'a:t', 'w:p', 'a:q', 'w:p', 'z:r']);
  });

  it('reads attributes however they are spaced and quoted, and skips names without a value', () => {
    const root = parseXml(`<w:p xmlns:w="${W}" w:val = 'one' plain="two" bare w:other="a>b"/>`, budget());
    expect(root.attrs).toEqual({ 'w:val': 'one', plain: 'two', 'w:other': 'a>b' });
  });

  it(`refuses nesting deeper than ${MAX_XML_DEPTH} levels, plainly`, () => {
    const deep = (n: number) => `<a>${'<b>'.repeat(n)}${'</b>'.repeat(n)}</a>`;
    expect(names(parseXml(deep(MAX_XML_DEPTH - 1), budget()))).toHaveLength(MAX_XML_DEPTH);
    const error = (() => {
      try {
        parseXml(deep(MAX_XML_DEPTH), budget());
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ParseError);
    expect(error).toMatchObject({
      reason: 'corrupt',
      message: 'The document is nested more than 256 levels deep and cannot be read',
    });
  });

  it('stops a tree at MAX_TREE_NODES, notes the cut, and reads on', () => {
    const doc = `<r><big>${'<i>x</i>'.repeat(MAX_TREE_NODES)}</big><after>y</after></r>`;
    const spent = budget();
    const seen: XmlElement[] = [];
    forEachElement(
      doc,
      (name) => name === 'big' || name === 'after',
      (el) => seen.push(el),
      spent,
    );
    expect(seen.map((el) => el.name)).toEqual(['big', 'after']);
    expect(seen[0]!.children.length).toBeLessThan(MAX_TREE_NODES);
    expect(seen[1]!.children).toEqual(['y']);
    expect(spent.warnings()).toEqual(['A part of the document has more than 200,000 elements; only its beginning was read']);
  });

  it('counts each tag against the budget', () => {
    const small = new ParseBudget({ ...DEFAULT_PARSE_LIMITS, maxSteps: 100 });
    expect(() => parseXml(`<r>${'<i/>'.repeat(200)}</r>`, small)).toThrow(BudgetSpent);
    expect(small.warnings()).toEqual(['The document is too complex to read in full; only its first part was read']);
  });
});
