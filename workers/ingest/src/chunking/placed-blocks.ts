import { normaliseWhitespace } from '#core/text/sentences.ts';
import { cutLongText } from '../parsers/long-text.ts';
import type { Block } from '../parsers/types.ts';

/** A non-empty block, normalised, placed under the heading path (and in the table) it belongs to. */
export interface PlacedBlock {
  kind: Block['kind'];
  text: string;
  page?: number;
  sheet?: string;
  headings: readonly string[];
  /** Consecutive table rows of one sheet share a table. */
  table?: number;
  /** The table's first row, repeated as a header when a table continues into a new chunk. */
  tableHeader?: number;
  /** The text goes on from the block before: both are parts of one long block, cut at a space. */
  continues?: boolean;
}

/**
 * A block longer than this is placed as several, cut at spaces: the chunker splits a block into
 * sentences, and the sentences of a 16-million-character paragraph would not fit the isolate.
 * Far above the largest chunk, so only such walls of text are cut.
 */
export const MAX_BLOCK_CHARS = 64 * 1024;

/** The blocks with text, in order, each with its heading path and table. */
export function placeBlocks(blocks: readonly Block[]): PlacedBlock[] {
  if (!Array.isArray(blocks)) throw new TypeError('chunkBlocks: blocks must be an array');
  const placed: PlacedBlock[] = [];
  const headingStack: Array<{ level: number; text: string }> = [];
  let table = -1;
  let tableHeader = -1;
  let previous: PlacedBlock | undefined;
  for (const block of blocks) {
    const text = typeof block?.text === 'string' ? normaliseWhitespace(block.text) : '';
    if (!text) continue;
    const placedBlock: PlacedBlock = { kind: block.kind, text, headings: [] };
    if (typeof block.page === 'number' && Number.isFinite(block.page)) placedBlock.page = block.page;
    if (typeof block.sheet === 'string' && block.sheet) placedBlock.sheet = block.sheet;
    if (block.kind === 'heading') {
      const level = Math.min(6, Math.max(1, Math.trunc(block.level ?? 1) || 1));
      while (headingStack.length > 0 && (headingStack[headingStack.length - 1]?.level ?? 0) >= level) headingStack.pop();
      headingStack.push({ level, text });
    }
    placedBlock.headings = headingStack.map((heading) => heading.text);
    if (block.kind === 'table_row') {
      if (previous?.kind !== 'table_row' || previous.sheet !== placedBlock.sheet) {
        table++;
        tableHeader = placed.length;
      }
      placedBlock.table = table;
      placedBlock.tableHeader = tableHeader;
    }
    // A parser that cut a wall of text itself says the piece goes on from the one before.
    const goesOn = block.continues === true && previous !== undefined && previous.kind === block.kind;
    const parts = text.length > MAX_BLOCK_CHARS ? cutLongText(text, MAX_BLOCK_CHARS) : [text];
    parts.forEach((part, i) => {
      placed.push(i === 0 && !goesOn ? { ...placedBlock, text: part } : { ...placedBlock, text: part, continues: true });
    });
    previous = placedBlock;
  }
  return placed;
}
