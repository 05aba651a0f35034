/**
 * How often each text was sent to /v1/embeddings, so that a test can see what the ingest worker had
 * embedded (test/api/ingest-fairness.test.ts: a document that repeats itself costs one input per
 * distinct text). Devstack only: the OpenAI API has no such thing. The oldest texts are forgotten
 * past MAX_TEXTS, so a long `npm run dev` does not grow without end.
 */
const MAX_TEXTS = 50_000;

export interface EmbeddedTexts {
  record(texts: string[]): void;
  /** Inputs embedded so far that contain `marker`, counting each time a text was sent. */
  containing(marker: string): { inputs: number; distinct: number };
}

export function createEmbeddedTexts(): EmbeddedTexts {
  const counts = new Map<string, number>();
  return {
    record(texts) {
      for (const text of texts) {
        const seen = counts.get(text);
        // Re-inserted, so that Map order stays the order of last use.
        if (seen !== undefined) counts.delete(text);
        counts.set(text, (seen ?? 0) + 1);
        if (counts.size > MAX_TEXTS) counts.delete(counts.keys().next().value as string);
      }
    },
    containing(marker) {
      let inputs = 0;
      let distinct = 0;
      for (const [text, count] of counts) {
        if (!text.includes(marker)) continue;
        inputs += count;
        distinct++;
      }
      return { inputs, distinct };
    },
  };
}
