import type { ParsedDocument, ParseLimits } from './types.ts';

/**
 * What reading one document may cost, counted as the parser goes: characters of text it
 * yields (every repetition of a shared string or a table header counts again) and steps of
 * work (tags, rows, lines, text items). A timer cannot stop a synchronous loop, so the
 * parser checks the budget itself; when it runs out the parser stops where it is, keeps
 * what it has, and the document ends `partial` with the budget's warning.
 */
export class ParseBudget {
  private chars: number;
  private steps: number;
  private spent: 'chars' | 'steps' | null = null;
  private readonly notes = new Set<string>();

  constructor(private readonly limits: Pick<ParseLimits, 'maxChars' | 'maxSteps' | 'charsBefore'>) {
    this.chars = limits.maxChars - (limits.charsBefore ?? 0);
    this.steps = limits.maxSteps;
  }

  /** Counts `n` steps of work; throws BudgetSpent once the budget is used up. */
  work(n = 1): void {
    this.steps -= n;
    if (this.steps < 0) this.spent ??= 'steps';
    if (this.spent) throw new BudgetSpent();
  }

  /**
   * Takes a piece of extracted text from the budget and returns it, or only the part that still
   * fits (then the budget is spent, and the next call stops the parser). A single huge paragraph
   * is thus cut rather than lost.
   */
  take(text: string): string {
    if (this.spent) throw new BudgetSpent();
    this.chars -= text.length;
    if (this.chars >= 0) return text;
    this.spent = 'chars';
    let fits = text.length + this.chars;
    this.chars = 0;
    // Never half of a surrogate pair at the cut.
    const code = text.charCodeAt(fits - 1);
    if (code >= 0xd800 && code <= 0xdbff) fits--;
    return fits > 0 ? text.slice(0, fits) : '';
  }

  /** Counts characters that are read but not kept whole (a cell on its way into a row). */
  count(n: number): void {
    if (this.spent) throw new BudgetSpent();
    this.chars -= n;
    if (this.chars < 0) {
      this.spent = 'chars';
      throw new BudgetSpent();
    }
  }

  /** A part of the document that was cut short for size, reported once however often it happens. */
  note(warning: string): void {
    this.notes.add(warning);
  }

  /** Whether the budget ran out, so that nothing after the stop was read. */
  get exhausted(): boolean {
    return this.spent !== null;
  }

  /**
   * Runs `read`, which stops where the budget runs out; anything else it throws goes on.
   * What `read` collected before the stop is the document's readable part.
   */
  until(read: () => void): void {
    try {
      read();
    } catch (error) {
      if (!(error instanceof BudgetSpent)) throw error;
    }
  }

  /** The same for a parser that awaits (PDF pages). */
  async untilAsync(read: () => Promise<void>): Promise<void> {
    try {
      await read();
    } catch (error) {
      if (!(error instanceof BudgetSpent)) throw error;
    }
  }

  /** A parser's result with what the budget cost it: its warnings after the parser's own, and whether it stopped. */
  finish(doc: ParsedDocument): ParsedDocument {
    return { ...doc, warnings: [...doc.warnings, ...this.warnings()], ...(this.exhausted ? { truncated: true } : {}) };
  }

  /** What the document lost to the budget, in words for the job's message. */
  warnings(): string[] {
    const out = [...this.notes];
    if (this.spent === 'chars') {
      out.push(charsWarning(this.limits.maxChars));
    } else if (this.spent === 'steps') {
      out.push('The document is too complex to read in full; only its first part was read');
    }
    return out;
  }
}

/** The words for a document whose text ran past `maxChars`. */
export function charsWarning(maxChars: number): string {
  const max = maxChars.toLocaleString('en-US');
  return `The document has more than ${max} characters of text; only the first ${max} were read`;
}

/** Thrown through a parser's loops to stop it; `ParseBudget.until` catches it. */
export class BudgetSpent extends Error {
  constructor() {
    super('the document’s parse budget is spent');
    this.name = 'BudgetSpent';
  }
}
