import { describe, expect, it } from 'vitest';
import { normaliseWhitespace, SENTENCE_END } from '#core/text/sentences.ts';
import { atxHeading, isDelimiterRow, isThematicBreak } from '../../../workers/ingest/src/parsers/markdown.ts';
import { stripInline } from '../../../workers/ingest/src/parsers/markdown-inline.ts';
import { seededRandom } from '../../support/seeded-random.ts';

/**
 * The linear matchers against the regexes they replaced, on many short random strings drawn
 * from the characters that matter to each: short strings cannot make the old regexes slow, so
 * they say what the answer must be. (On long ones the old regexes took seconds to hours; see
 * test/unit/hostile-files.test.ts.)
 */

const OLD = {
  atx: /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/,
  thematic: /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/,
  delimiter: /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/,
  sentenceEnd: /[.!?…]+['"”’»)\]]*(?=\s+\S)|[。！？]+[」』）"”’]*/gu,
  normaliseWhitespace: (text: string) =>
    text
      .replace(/[\u00ad\u200b\u2060\ufeff]/gu, '')
      .replace(/[\s\p{Cc}]+/gu, ' ')
      .trim(),
  stripInline: (text: string) =>
    text
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
      .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, '$2')
      .replace(/`+([^`]+?)`+/g, '$1')
      .replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, '$1')
      .trim(),
};

function samples(alphabet: readonly string[], count: number, maxLength: number, seed: number): string[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const length = Math.floor(random() * (maxLength + 1));
    return Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
  });
}

describe('the linear matchers give what the regexes they replaced gave', () => {
  it('ATX headings', () => {
    for (const line of samples(['#', ' ', '\t', 'a', 'b'], 20_000, 12, 1)) {
      const old = OLD.atx.exec(line);
      expect(atxHeading(line), JSON.stringify(line)).toEqual(old ? { level: old[1]!.length, text: old[2] ?? '' } : null);
    }
  });

  it('thematic breaks', () => {
    for (const line of samples(['-', '*', '_', ' ', '\t', 'a'], 20_000, 9, 2)) {
      expect(isThematicBreak(line), JSON.stringify(line)).toBe(OLD.thematic.test(line));
    }
  });

  it('table delimiter rows', () => {
    for (const line of samples(['-', ':', '|', ' ', '\t', 'a'], 30_000, 10, 3)) {
      expect(isDelimiterRow(line), JSON.stringify(line)).toBe(OLD.delimiter.test(line) && line.includes('-'));
    }
  });

  it('inline markup', () => {
    const alphabet = ['[', ']', '(', ')', '!', '*', '**', '_', '__', '`', '\\', 'a', 'b', ' ', '\u2028'];
    for (const text of samples(alphabet, 50_000, 14, 4)) {
      expect(stripInline(text), JSON.stringify(text)).toBe(OLD.stripInline(text));
    }
  });

  it('sentence ends', () => {
    const alphabet = ['.', '!', '?', '…', '"', ')', '’', ' ', 'a', 'A', '。', '」'];
    for (const text of samples(alphabet, 30_000, 14, 5)) {
      const ends = (regex: RegExp) => [...text.matchAll(regex)].map((m) => [m.index, m[0]]);
      expect(ends(SENTENCE_END), JSON.stringify(text)).toEqual(ends(OLD.sentenceEnd));
    }
  });

  // Not a matter of time: the new regex leaves a lone space alone, so that tidy text is not copied.
  it('whitespace normalisation', () => {
    const alphabet = [' ', '  ', '\t', '\n', '\u00a0', '\u2028', '\u0001', '\u00ad', '\u200b', 'a', 'é'];
    for (const text of samples(alphabet, 30_000, 12, 6)) {
      expect(normaliseWhitespace(text), JSON.stringify(text)).toBe(OLD.normaliseWhitespace(text));
    }
  });
});
