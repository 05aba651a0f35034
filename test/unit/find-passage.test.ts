import { describe, expect, it } from 'vitest';
import { findPassage, type ItemRange } from '../../web/src/source/find-passage.ts';

// Two pages as pdf.js gives their text items: a line split where its font or spacing changes, empty and
// whitespace items at line ends, a word hyphenated across lines, ligatures as one character, a running
// header and a page number. The passages are as ingestion stores them: lines joined with spaces, the
// hyphen of a broken word dropped, ligatures as letters, the header and page number left out.
const PAGE_72 = [
  '4.2 Results of the survey',
  '',
  'The committee measured the water temperature at ',
  '14',
  ' sta-',
  'tions along the estuary. Readings were taken every',
  ' ',
  'morning between 6 and 8 a.m., and the ﬁgures were ',
  'averaged over the season.',
  'Salinity rose by 3.4 per cent in the upper reaches, where',
  'the tidal inﬂow is strongest; in the lower reaches it',
  'fell.',
  '72',
];
const PAGE_73 = [
  'Estuary survey 2025',
  'Dissolved oxygen stayed above 7 mg/l at every',
  'station except the harbour mouth. The next survey',
  'is planned for the spring of 2027.',
  '73',
];

/** What the ranges cover, one string per range, as the highlighted spans read. */
const covered = (items: string[], ranges: ItemRange[]) => ranges.map(({ item, start, end }) => items[item]!.slice(start, end));

describe('findPassage', () => {
  it('finds a passage that starts a line, across item splits and a hyphenated word', () => {
    const passage =
      'The committee measured the water temperature at 14 stations along the estuary. Readings were taken every ' +
      'morning between 6 and 8 a.m., and the figures were averaged over the season.';
    const match = findPassage(PAGE_72, passage);
    expect(match?.fromStart).toBe(true);
    expect(covered(PAGE_72, match?.ranges ?? [])).toEqual([
      'The committee measured the water temperature at ',
      '14',
      ' sta-',
      'tions along the estuary. Readings were taken every',
      ' ',
      'morning between 6 and 8 a.m., and the ﬁgures were ',
      'averaged over the season',
    ]);
  });

  it('starts mid-line where the passage does, and stops where it ends', () => {
    const match = findPassage(PAGE_72, 'Readings were taken every morning between 6 and 8 a.m.');
    expect(match?.ranges).toEqual([
      { item: 5, start: 'tions along the estuary. '.length, end: PAGE_72[5]!.length },
      { item: 6, start: 0, end: 1 },
      { item: 7, start: 0, end: 'morning between 6 and 8 a.m'.length },
    ]);
  });

  it('takes a passage that runs onto the next page: its beginning here, its end at the top of the next', () => {
    const passage =
      'Salinity rose by 3.4 per cent in the upper reaches, where the tidal inflow is strongest; in the lower reaches it ' +
      'fell. Dissolved oxygen stayed above 7 mg/l at every station except the harbour mouth.';
    const here = findPassage(PAGE_72, passage);
    expect(here?.fromStart).toBe(true);
    // Not the page number below it, although the passage goes on.
    expect(covered(PAGE_72, here?.ranges ?? [])).toEqual([
      'Salinity rose by 3.4 per cent in the upper reaches, where',
      'the tidal inﬂow is strongest; in the lower reaches it',
      'fell',
    ]);
    const next = findPassage(PAGE_73, passage);
    expect(next?.fromStart).toBe(false);
    // Not the running header above it.
    expect(covered(PAGE_73, next?.ranges ?? [])).toEqual([
      'Dissolved oxygen stayed above 7 mg/l at every',
      'station except the harbour mouth',
    ]);
  });

  it('steps over what the page has between two parts of the passage', () => {
    const items = [...PAGE_72.slice(0, 8), 'Figure 3. Salinity by station.', ...PAGE_72.slice(8)];
    const match = findPassage(items, 'and the figures were averaged over the season. Salinity rose by 3.4 per cent');
    expect(covered(items, match?.ranges ?? [])).toEqual([
      'and the ﬁgures were',
      'averaged over the season.',
      'Salinity rose by 3.4 per cent',
    ]);
    expect(match?.ranges.some((range) => range.item === 8)).toBe(false);
  });

  it('compares accents, case, and full-width and ligature forms as the same letters', () => {
    const items = ['Ｒésumé des ', 'MESURES', ' ﬁnales'];
    expect(covered(items, findPassage(items, 'resume des mesures finales')?.ranges ?? [])).toEqual(items);
  });

  it('finds nothing on a page without the passage, and no passage in a few common words', () => {
    expect(findPassage(PAGE_73, 'Readings were taken every morning between 6 and 8 a.m.')).toBeNull();
    // The passage's start is not here, and what the page shares with it ("the upper reaches") is too short to count.
    expect(findPassage(PAGE_72, 'Nitrate peaked in the upper reaches in June.')).toBeNull();
    expect(findPassage(PAGE_72, '')).toBeNull();
    expect(findPassage([], 'The committee measured')).toBeNull();
  });

  it('takes a passage shorter than the minimum whole', () => {
    expect(covered(PAGE_73, findPassage(PAGE_73, 'mg/l')?.ranges ?? [])).toEqual(['mg/l']);
  });

  it('keeps a page of thousands of characters and a long passage elsewhere fast', () => {
    const line = (n: number) => `Line ${n} of the report says that the measured value was ${n * 7} units. `;
    const items = Array.from({ length: 120 }, (_, n) => line(n));
    const passage = Array.from({ length: 30 }, (_, n) => `Another document sentence number ${n} is not here.`).join(' ');
    const started = performance.now();
    expect(findPassage(items, passage)).toBeNull();
    expect(performance.now() - started).toBeLessThan(500);
  });
});
