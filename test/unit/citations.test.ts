import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkCitationsLexically, citationSupport, citationsOf } from '../../workers/scoring/src/evals/citations.ts';

const pubmed = JSON.parse(readFileSync(new URL('../fixtures/pubmedqa/pqal_dev-first60.json', import.meta.url), 'utf8'));
const sources = (pubmed['10808977'].CONTEXTS as string[]).map((text) => ({ text }));

describe('citation checks', () => {
  it('finds every [n] with the sentence that cites it, in the forms models write', () => {
    expect(citationsOf('Alpha rose [1]. Beta fell [2, 3]. Gamma held [4-5][1]. Delta. [6]')).toEqual([
      { source: 1, sentence: 'Alpha rose.' },
      { source: 2, sentence: 'Beta fell.' },
      { source: 3, sentence: 'Beta fell.' },
      { source: 4, sentence: 'Gamma held.' },
      { source: 5, sentence: 'Gamma held.' },
      { source: 1, sentence: 'Gamma held.' },
      { source: 6, sentence: 'Delta.' },
    ]);
    expect(citationsOf('No citations here.')).toEqual([]);
    // The extractive engine, and some models, put the marker after the full stop.
    expect(citationsOf('Alpha rose. [1] Beta fell. [2][3] Gamma held.')).toEqual([
      { source: 1, sentence: 'Alpha rose.' },
      { source: 2, sentence: 'Beta fell.' },
      { source: 3, sentence: 'Beta fell.' },
    ]);
  });

  it('holds a citation only when the cited passage itself supports the sentence', () => {
    const checks = checkCitationsLexically(
      'Compared to usual care alone, telephone counseling promoted a significantly higher proportion of women having ' +
        'mammograms on schedule (71% vs 61%) than did tailored print (67% vs 61%), but only after the first year of intervention [6]. ' +
        'Telephone counseling raised on-schedule mammography to 71% versus 61% with usual care [1]. It also cured the flu [9].',
      sources,
    );
    expect(checks.map((c) => [c.source, c.supported])).toEqual([
      [6, true],
      [1, false],
      [9, false],
    ]);
    expect(citationSupport(checks)).toBeCloseTo(1 / 3);
    expect(citationSupport([])).toBeNull();
  });
});
