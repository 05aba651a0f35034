/** Drives a document through the extract steps as the ingest worker does, for the hostile files' tests and probe. */
/** What one extract step hands back, as `runSteps` needs it. */
export interface StepOutcome {
  chunks: number;
  warnings: string[];
  /** The next page to read; undefined when the document is done. */
  nextPage?: number;
  /** What pdf.js decompressed in the step, which the next step's budget counts. */
  decodedBytes?: number;
}

export interface RunOutcome {
  status: 'succeeded' | 'partial' | 'failed';
  /** The job's message: its warnings, or the error. */
  message: string;
  chunks: number;
  steps: number;
}

/**
 * Runs a document through the extract steps as the worker does (a PDF one page range per
 * step, each starting where the last one ended, with the chunks and decoded bytes so far), and says how its job
 * would end. An error with a message ends it `failed`; warnings make it `partial`.
 */
export async function runSteps(
  step: (fromPage: number, chunksBefore: number, decodedBefore: number) => Promise<StepOutcome>,
): Promise<RunOutcome> {
  let chunks = 0;
  let decoded = 0;
  let steps = 0;
  const warnings: string[] = [];
  let page: number | undefined = 1;
  try {
    while (page !== undefined) {
      steps++;
      const outcome = await step(page, chunks, decoded);
      chunks += outcome.chunks;
      decoded += outcome.decodedBytes ?? 0;
      warnings.push(...outcome.warnings);
      page = outcome.nextPage;
    }
  } catch (error) {
    return { status: 'failed', message: error instanceof Error ? error.message : String(error), chunks, steps };
  }
  if (chunks === 0) return { status: 'failed', message: 'The document has no text or images that could be read', chunks, steps };
  return { status: warnings.length > 0 ? 'partial' : 'succeeded', message: warnings.join('; '), chunks, steps };
}
