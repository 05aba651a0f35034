import { readFileSync } from 'node:fs';
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { splitSentences } from '#core/text/sentences.ts';
import { tokenize } from '#retrieval/sparse.ts';
import {
  judgeScores,
  lexicalScores,
  SCORER_DESCRIPTION,
  type ScoreInput,
} from '../../workers/scoring/src/evals/lexical-scorer.ts';
import { answerStatements, isRefusal } from '../../workers/scoring/src/evals/statements.ts';
import { seededRandom } from '../support/seeded-random.ts';

const TOWER =
  "The Eiffel Tower was completed in 1889 as the entrance arch to the World's Fair. It is 330 metres tall and was " +
  'designed by the engineering company of Gustave Eiffel. For 41 years it was the tallest man-made structure in the world.';
const PAINT =
  'The tower is repainted every seven years to protect it from rust. About 60 tonnes of paint are applied by hand during each campaign.';
const PHOTOSYNTHESIS =
  'Photosynthesis converts light energy into chemical energy stored in glucose. Chlorophyll absorbs mostly blue and red light.';
const VOLCANO = 'Basaltic lava flows erupt at high temperature and spread quickly across gentle slopes.';

const QUESTION = 'When was the Eiffel Tower completed and how tall is it?';
const sources = [{ text: TOWER }, { text: PAINT }];

const FAITHFUL =
  "The Eiffel Tower was completed in 1889 as the entrance arch to the World's Fair [1]. It is 330 metres tall [1]. " +
  'The tower is repainted every seven years to protect it from rust [2].';
const HALLUCINATED =
  'The Eiffel Tower was built by Napoleon in 1750 as a military lookout. It was moved to Lyon after the war. ' +
  'Its elevators are powered by wind turbines on the roof.';

const score = (answer: string, withSources = sources, question = QUESTION) =>
  lexicalScores({ question, answer, sources: withSources });

describe('lexical faithfulness', () => {
  it('scores an answer copied from the sources high', async () => {
    const { faithfulness_score } = await score(FAITHFUL);
    expect(faithfulness_score).toBeGreaterThanOrEqual(0.9);
  });

  it('scores a hallucinated answer on the same subject low', async () => {
    const { faithfulness_score } = await score(HALLUCINATED);
    expect(faithfulness_score).toBeLessThanOrEqual(0.2);
  });

  it('scores a half-supported answer in between', async () => {
    const partial =
      'The Eiffel Tower was completed in 1889 for the World’s Fair [1]. It was moved to Lyon after the war. ' +
      'About 60 tonnes of paint are applied by hand [2]. Its elevators are powered by wind turbines on the roof.';
    const { faithfulness_score } = await score(partial);
    expect(faithfulness_score).toBeCloseTo(0.5, 5);
  });

  it('ignores citation markers of every usual form', async () => {
    const plain = 'It is 330 metres tall. The tower is repainted every seven years.';
    const cited = 'It is 330 metres tall [12]. The tower is repainted every seven years [1, 2][Source 3] [2-4].';
    expect(await score(cited)).toEqual(await score(plain));
    // "[12]" is not a number the sources would have to contain.
    expect((await score(cited)).faithfulness_score).toBe(1);
  });

  it('counts a statement with a wrong number as unsupported, even when its words match', async () => {
    expect((await score('The tower is 450 metres tall.')).faithfulness_score).toBe(0);
    expect((await score('The tower is 330 metres tall.')).faithfulness_score).toBe(1);
  });

  it('leaves refusals out: an answer that only declines scores 1, its claims are still checked', async () => {
    const refusal = 'The documents do not contain information about ticket prices for the tower.';
    expect((await score(refusal)).faithfulness_score).toBe(1);
    expect((await score("I couldn't find the architect's birthday in the provided sources.")).faithfulness_score).toBe(1);
    const mixed = `${refusal} It was moved to Lyon after the war and repainted pink in 2020.`;
    expect((await score(mixed)).faithfulness_score).toBe(0);
  });

  it('scores an empty answer, or one of citations and filler only, 0', async () => {
    for (const answer of ['', '   \n', '[1] [2]', 'Sure!']) expect((await score(answer)).faithfulness_score).toBe(0);
  });

  it('scores claims against no sources 0', async () => {
    expect(await score(FAITHFUL, [])).toEqual({ faithfulness_score: 0, context_relevance_score: 0 });
    expect(await score(FAITHFUL, [{ text: '  ' }])).toEqual({ faithfulness_score: 0, context_relevance_score: 0 });
  });

  it('accepts support spread over two consecutive source sentences, not over distant ones', async () => {
    const adjacent = 'The tower is repainted every seven years, with about 60 tonnes of paint applied by hand.';
    expect((await score(adjacent)).faithfulness_score).toBe(1);
    const source = [{ text: `Alpha beta gamma delta. ${VOLCANO} ${PHOTOSYNTHESIS} Epsilon zeta eta theta.` }];
    expect((await score('Alpha beta gamma delta with epsilon zeta eta theta.', source)).faithfulness_score).toBe(0);
  });
});

describe('lexical context relevance', () => {
  it('is high for sources that answer the question', async () => {
    expect((await score(FAITHFUL)).context_relevance_score).toBeGreaterThanOrEqual(0.8);
  });

  it('is low for unrelated sources', async () => {
    const { context_relevance_score } = await score(FAITHFUL, [{ text: PHOTOSYNTHESIS }, { text: VOLCANO }]);
    expect(context_relevance_score).toBeLessThanOrEqual(0.1);
  });

  it('gives one on-point source among unrelated ones a middling score', async () => {
    const { context_relevance_score } = await score(FAITHFUL, [{ text: TOWER }, { text: PHOTOSYNTHESIS }, { text: VOLCANO }]);
    expect(context_relevance_score).toBeGreaterThan(0.5);
    expect(context_relevance_score).toBeLessThan(0.8);
  });

  it('does not count interrogatives as terms to cover', async () => {
    const { context_relevance_score } = await score(
      FAITHFUL,
      [{ text: TOWER }],
      'What is the Eiffel Tower, and how was it designed?',
    );
    expect(context_relevance_score).toBe(1);
  });

  it('is 0 without sources or when the question has no content terms', async () => {
    expect((await score(FAITHFUL, [])).context_relevance_score).toBe(0);
    expect((await score(FAITHFUL, sources, 'What is it?')).context_relevance_score).toBe(0);
  });
});

describe('on PubMedQA', () => {
  const questions = Object.values(
    JSON.parse(readFileSync(new URL('../fixtures/pubmedqa/pqal_dev-first60.json', import.meta.url), 'utf8')),
  ) as { QUESTION: string; CONTEXTS: string[]; LONG_ANSWER: string }[];
  const sample = questions.slice(0, 60);
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

  it('separates answers copied from the abstract from another abstract’s conclusions', async () => {
    const copied: number[] = [];
    const foreign: number[] = [];
    for (const [i, item] of sample.entries()) {
      const itemSources = item.CONTEXTS.map((text) => ({ text }));
      const sentences = item.CONTEXTS.flatMap(splitSentences);
      const answer = sentences.slice(1, 3).join(' [1]\n');
      copied.push((await lexicalScores({ question: item.QUESTION, answer, sources: itemSources })).faithfulness_score);
      const other = questions[(i + 250) % questions.length] as (typeof questions)[number];
      foreign.push(
        (await lexicalScores({ question: item.QUESTION, answer: other.LONG_ANSWER, sources: itemSources })).faithfulness_score,
      );
    }
    expect(Math.min(...copied)).toBeGreaterThanOrEqual(0.9);
    expect(Math.max(...foreign)).toBeLessThanOrEqual(0.2);
  });

  it('rates a question’s own abstract as more relevant than another one', async () => {
    const own: number[] = [];
    const other: number[] = [];
    for (const [i, item] of sample.entries()) {
      const unrelated = questions[(i + 250) % questions.length] as (typeof questions)[number];
      const input = { question: item.QUESTION, answer: item.LONG_ANSWER };
      own.push((await lexicalScores({ ...input, sources: item.CONTEXTS.map((text) => ({ text })) })).context_relevance_score);
      other.push(
        (await lexicalScores({ ...input, sources: unrelated.CONTEXTS.map((text) => ({ text })) })).context_relevance_score,
      );
    }
    expect(mean(own)).toBeGreaterThan(0.45);
    expect(mean(other)).toBeLessThan(0.1);
    expect(own.filter((value, i) => value > (other[i] as number)).length).toBeGreaterThanOrEqual(55);
  });
});

describe('bounds and determinism', () => {
  const vocabulary = `${TOWER} ${PAINT} ${PHOTOSYNTHESIS} [1] [2] . . ? 2020 the documents do not contain`.split(/\s+/u);
  const words = (random: () => number, count: number) =>
    Array.from({ length: count }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' ');

  it('keeps both scores in [0, 1] for arbitrary text', async () => {
    const random = seededRandom(42);
    for (let i = 0; i < 200; i++) {
      const input: ScoreInput = {
        question: words(random, Math.floor(random() * 12)),
        answer: words(random, Math.floor(random() * 60)),
        sources: Array.from({ length: Math.floor(random() * 4) }, () => ({ text: words(random, Math.floor(random() * 80)) })),
      };
      const scores = await lexicalScores(input);
      for (const value of Object.values(scores)) {
        expect(Number.isFinite(value)).toBe(true);
        expect(value).toBeGreaterThanOrEqual(0);
        expect(value).toBeLessThanOrEqual(1);
      }
    }
  });

  it('gives the same scores on every call', async () => {
    const partial = `${FAITHFUL} ${HALLUCINATED}`;
    const first = await score(partial);
    for (let i = 0; i < 3; i++) expect(await score(partial)).toEqual(first);
  });

  it('names a malformed input instead of crashing on it', async () => {
    await expect(lexicalScores({ question: 'q', answer: 'a', sources: [{ text: 3 }] } as never)).rejects.toThrow(/sources/);
    await expect(lexicalScores({ question: 'q', answer: null } as never)).rejects.toThrow(/answer/);
  });
});

describe('statements', () => {
  it('joins fragments that sentence segmentation splits off', () => {
    const { statements } = answerStatements('Dr. Smith measured e.g. 3.5 mg of iron [2]. Yes. The dose was safe for adults.');
    expect(statements.map((statement) => statement.text)).toEqual([
      'Dr. Smith measured e.g. 3.5 mg of iron.',
      'Yes. The dose was safe for adults.',
    ]);
  });

  it('drops list markers, so "1." is not a number to find', () => {
    const { statements } = answerStatements('Steps:\n1. Preheat the oven to 200 degrees.\n- Bake the bread for forty minutes.');
    expect(statements.flatMap((statement) => statement.terms)).not.toContain('1');
    expect(statements.flatMap((statement) => statement.terms)).toContain('200');
  });

  it('reads each row of a Markdown table as a statement, its cells named by their columns', () => {
    const answer = '| Team | Cups |\n| --- | :-: |\n| Greens | 7 |\n| Blues | 1 |\n\n[1]\n\nThe Greens won first.';
    expect(answerStatements(answer).statements.map((statement) => statement.text)).toEqual([
      'Team: Greens; Cups: 7.',
      'Team: Blues; Cups: 1.',
      'The Greens won first.',
    ]);
  });

  it('scores a two-column table quoted from a spreadsheet as faithful, row by row', async () => {
    const rows = [{ text: 'Team: Greens; Cups: 7\nTeam: Blues; Cups: 1\nTeam: Reds; Cups: 4' }];
    const quoted = '| Team | Cups |\n| --- | --- |\n| Greens | 7 |\n| Blues | 1 |\n| Reds | 4 |\n\n[1]';
    expect((await score(quoted, rows)).faithfulness_score).toBe(1);
    const wrong = '| Team | Cups |\n| --- | --- |\n| Greens | 9 |\n| Blues | 1 |\n| Reds | 4 |\n\n[1]';
    expect((await score(wrong, rows)).faithfulness_score).toBeCloseTo(2 / 3, 5);
  });

  it('recognises refusals, not negative findings', () => {
    for (const sentence of [
      'The documents do not contain information about the budget.',
      'The provided context does not specify the date.',
      'There is no information about this in the sources.',
      'I cannot answer this from the documents.',
      'I don’t know.',
    ]) {
      expect(isRefusal(sentence), sentence).toBe(true);
    }
    for (const sentence of ['The trial did not include children.', 'Aspirin does not reduce mortality in this cohort.']) {
      expect(isRefusal(sentence), sentence).toBe(false);
    }
  });
});

// An embedding that sees meaning only: words map to concepts through a synonym table, everything else is ignored.
const CONCEPTS: Record<string, string> = {
  eiffel: 'tower',
  tower: 'tower',
  landmark: 'tower',
  complet: 'finish',
  finish: 'finish',
  built: 'finish',
  tall: 'height',
  height: 'height',
  1889: '1889',
  paint: 'paint',
  repaint: 'paint',
  photosynthesi: 'plant',
  chlorophyl: 'plant',
};
const CONCEPT_AXES = [...new Set(Object.values(CONCEPTS))];

function conceptEmbed(calls: string[][]) {
  return async (texts: string[]) => {
    calls.push(texts);
    return texts.map((text) => {
      const vector = CONCEPT_AXES.map(() => 0);
      for (const term of tokenize(text)) {
        const concept = CONCEPTS[term];
        if (concept) vector[CONCEPT_AXES.indexOf(concept)] = 1;
      }
      return vector;
    });
  };
}

describe('lexical scores with embeddings', () => {
  // Shares only "1889" (1 of 3 terms) with the sources, in the words it uses.
  const paraphrase = 'The landmark was finished in 1889.';

  it('admits a paraphrase that the terms alone do not support', async () => {
    expect((await score(paraphrase)).faithfulness_score).toBe(0);
    const calls: string[][] = [];
    const scores = await lexicalScores({ question: QUESTION, answer: paraphrase, sources }, { embed: conceptEmbed(calls) });
    expect(scores.faithfulness_score).toBe(1);
    // One call: the question, the passages, and only the statement in the grey zone.
    expect(calls).toEqual([[QUESTION, TOWER, PAINT, paraphrase]]);
  });

  it('does not let similar meaning rescue a statement with too few source terms', async () => {
    const calls: string[][] = [];
    const answer = 'The landmark was finished by Napoleon in 1889.';
    const scores = await lexicalScores({ question: QUESTION, answer, sources }, { embed: conceptEmbed(calls) });
    expect(scores.faithfulness_score).toBe(0);
    expect(calls[0]).toEqual([QUESTION, TOWER, PAINT]);
  });

  it('raises context relevance for a question worded unlike the sources', async () => {
    const question = 'When was the landmark finished?';
    const input = { question, answer: paraphrase, sources: [{ text: TOWER }] };
    expect((await lexicalScores(input)).context_relevance_score).toBe(0);
    expect((await lexicalScores(input, { embed: conceptEmbed([]) })).context_relevance_score).toBeGreaterThanOrEqual(0.9);
    const unrelated = { ...input, sources: [{ text: PHOTOSYNTHESIS }] };
    expect((await lexicalScores(unrelated, { embed: conceptEmbed([]) })).context_relevance_score).toBe(0);
  });

  it('passes on an embedding failure and rejects a short reply', async () => {
    const failing = async () => {
      throw new Error('model unavailable');
    };
    await expect(lexicalScores({ question: QUESTION, answer: FAITHFUL, sources }, { embed: failing })).rejects.toThrow(
      'model unavailable',
    );
    const short = async (texts: string[]) => texts.slice(1).map(() => [1, 0]);
    await expect(lexicalScores({ question: QUESTION, answer: FAITHFUL, sources }, { embed: short })).rejects.toThrow(
      /2 vectors for 3 texts/,
    );
  });
});

function judgeModel(judgment: unknown) {
  return new MockLanguageModelV3({
    doGenerate: {
      content: [{ type: 'text', text: JSON.stringify(judgment) }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: {
        inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 20, text: 20, reasoning: 0 },
      },
      warnings: [],
    },
  });
}

function promptText(call: LanguageModelV3CallOptions | undefined): string {
  return JSON.stringify(call?.prompt ?? []);
}

describe('judgeScores', () => {
  const input: ScoreInput = { question: QUESTION, answer: FAITHFUL, sources };

  it('scores the share of supported claims and the judged relevance', async () => {
    const model = judgeModel({
      statements: [
        { statement: 'The tower was completed in 1889.', supported: true },
        { statement: 'It is 330 metres tall.', supported: true },
        { statement: 'It is repainted every year.', supported: false },
      ],
      context_relevance: 0.8,
    });
    const scores = await judgeScores(input, model);
    expect(scores.faithfulness_score).toBeCloseTo(2 / 3, 10);
    expect(scores.context_relevance_score).toBe(0.8);

    const call = model.doGenerateCalls[0];
    expect(model.doGenerateCalls).toHaveLength(1);
    expect(call?.responseFormat).toMatchObject({ type: 'json' });
    const prompt = promptText(call);
    expect(prompt).toContain('Gustave Eiffel');
    expect(prompt).toContain('60 tonnes of paint');
    expect(prompt).toContain('330 metres tall.');
    expect(prompt).not.toContain('[1]');
  });

  it('scores an answer with no claims (a refusal) 1, like the lexical scorer', async () => {
    const scores = await judgeScores(
      { ...input, answer: 'The documents do not contain this.' },
      judgeModel({ statements: [], context_relevance: 0.1 }),
    );
    expect(scores).toEqual({ faithfulness_score: 1, context_relevance_score: 0.1 });
  });

  it('keeps the fixed cases fixed whatever the model says', async () => {
    const eager = judgeModel({ statements: [{ statement: 'x', supported: true }], context_relevance: 0.9 });
    expect(await judgeScores({ ...input, sources: [] }, eager)).toEqual({ faithfulness_score: 1, context_relevance_score: 0 });
    expect(await judgeScores({ ...input, answer: ' [1] ' }, eager)).toEqual({
      faithfulness_score: 0,
      context_relevance_score: 0.9,
    });

    const unused = judgeModel({ statements: [], context_relevance: 1 });
    expect(await judgeScores({ ...input, answer: '', sources: [] }, unused)).toEqual({
      faithfulness_score: 0,
      context_relevance_score: 0,
    });
    expect(unused.doGenerateCalls).toHaveLength(0);
  });

  it('rejects a judgment outside the schema', async () => {
    await expect(judgeScores(input, judgeModel({ statements: [], context_relevance: 1.5 }))).rejects.toThrow();
    await expect(judgeScores(input, judgeModel({ verdict: 'fine' }))).rejects.toThrow();
  });
});

describe('SCORER_DESCRIPTION', () => {
  it('states the thresholds the code uses', () => {
    expect(SCORER_DESCRIPTION).toContain('60%');
    expect(SCORER_DESCRIPTION).toContain('30%');
    expect(SCORER_DESCRIPTION).toContain('0.6');
    expect(SCORER_DESCRIPTION).toMatch(/empty answer scores 0/);
  });
});
