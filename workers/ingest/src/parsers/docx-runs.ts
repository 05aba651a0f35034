import { MAX_BLOCK_CHARS } from '../chunking/placed-blocks.ts';
import type { ParseBudget } from './budget.ts';
import { type GraphicRef, graphicRefs } from './graphics.ts';
import { cutLongText } from './long-text.ts';
import { child, descendants, type XmlElement } from './xml.ts';

/** DOCX runs: a paragraph's text, page breaks, images, charts, SmartArt and text boxes, and the formatting that can make it a heading. */

/** Page breaks seen before the first visible character, and after it. */
export interface Breaks {
  before: number;
  after: number;
}

/**
 * A paragraph's text as it is collected, cut as it grows into pieces of at most MAX_BLOCK_CHARS
 * where parsers/long-text.ts would cut it whole, and each piece tidied as soon as it is cut: a
 * run of megabytes is never one string that is joined, tidied and copied again, and its untidy
 * text is let go piece by piece. A short paragraph is one piece.
 */
export class RunText {
  private readonly done: string[] = [];
  private tail = '';

  constructor(private readonly tidy: (text: string) => string) {}

  add(text: string): void {
    this.tail += text;
    if (this.tail.length > 2 * MAX_BLOCK_CHARS) this.cut();
  }

  /** The tidy pieces, in order, the empty ones left out. */
  pieces(): string[] {
    if (this.tail.length > MAX_BLOCK_CHARS) this.cut();
    const last = this.tidy(this.tail);
    this.tail = '';
    return last === '' ? this.done : [...this.done, last];
  }

  private cut(): void {
    const parts = cutLongText(this.tail, MAX_BLOCK_CHARS);
    this.tail = parts.pop() as string;
    for (const part of parts) {
      const tidy = this.tidy(part);
      if (tidy !== '') this.done.push(tidy);
    }
  }
}

export interface Inline {
  text: RunText;
  /**
   * The document's budget, which takes each run's text as it is collected and cuts it where the
   * budget ends: a run of 16 million characters is never joined whole, then tidied, before the
   * budget sees it. Past the end nothing more is collected.
   */
  budget: ParseBudget;
  /**
   * Word's rendered page breaks (where it last laid the page out) and the explicit ones, both
   * counted: which of them number the pages is known only once the whole document was read.
   */
  rendered: Breaks;
  explicit: Breaks;
  imageIds: string[];
  /** Charts and SmartArt placed in the paragraph. */
  graphics: GraphicRef[];
  textboxes: XmlElement[];
  /** Every run carrying visible text is bold. */
  allBold: boolean;
  /** Smallest explicit size among runs with visible text, in half-points. */
  minSize: number | null;
  sawText: boolean;
}

const SKIPPED = new Set([
  'w:pPr',
  'w:rPr',
  'w:del',
  'w:moveFrom',
  'w:instrText',
  'w:delText',
  'w:sdtPr',
  'w:sdtEndPr',
  'w:fldChar',
]);

/** Appends a paragraph's (or a run's) text to `acc`, with its page breaks, images, graphics, text boxes and formatting. */
export function collectInline(el: XmlElement, acc: Inline, run: { bold: boolean; size: number | null } | null): void {
  for (const node of el.children) {
    if (typeof node === 'string') continue;
    switch (node.name) {
      case 'w:t':
      case 'm:t': {
        // A long run's text comes in pieces (xml-scan.ts), taken one at a time, never joined here.
        for (const text of texts(node)) {
          if (/\S/.test(text)) {
            acc.sawText = true;
            if (!run?.bold) acc.allBold = false;
            const size = run?.size ?? null;
            if (size !== null) acc.minSize = acc.minSize === null ? size : Math.min(acc.minSize, size);
            else acc.minSize = 0;
          }
          append(acc, text);
        }
        break;
      }
      case 'w:tab':
      case 'w:ptab':
        append(acc, '\t');
        break;
      case 'w:cr':
        append(acc, '\n');
        break;
      case 'w:noBreakHyphen':
        append(acc, '-');
        break;
      case 'w:br': {
        const type = node.attrs['w:type'];
        if (type === 'page') {
          pageBreak(acc, acc.explicit);
        } else {
          append(acc, type === 'column' ? ' ' : '\n');
        }
        break;
      }
      case 'w:lastRenderedPageBreak':
        pageBreak(acc, acc.rendered);
        break;
      case 'w:r': {
        const props = child(node, 'w:rPr');
        collectInline(node, acc, { bold: isBold(props), size: sizeOf(props) });
        break;
      }
      case 'w:drawing':
      case 'w:pict':
      case 'w:object':
        for (const blip of descendants(node, 'a:blip')) if (blip.attrs['r:embed']) acc.imageIds.push(blip.attrs['r:embed']);
        for (const data of descendants(node, 'v:imagedata')) if (data.attrs['r:id']) acc.imageIds.push(data.attrs['r:id']);
        graphicRefs(node, acc.graphics);
        // A text box (wps:txbx or VML v:textbox) is read as paragraphs of its own, after this one.
        acc.textboxes.push(...descendants(node, 'w:txbxContent'));
        break;
      default:
        if (!SKIPPED.has(node.name)) collectInline(node, acc, run);
    }
  }
}

/** The text nodes under an element, in order. */
function* texts(el: XmlElement): Generator<string> {
  for (const c of el.children) {
    if (typeof c === 'string') yield c;
    else yield* texts(c);
  }
}

/** Adds text to the paragraph, as much as the budget still takes. */
function append(acc: Inline, text: string): void {
  if (text === '' || acc.budget.exhausted) return;
  acc.text.add(acc.budget.take(text));
}

/** A paragraph's text, runs and formatting still to be collected; `tidy` is applied to each piece of its text. */
export function emptyInline(budget: ParseBudget, tidy: (text: string) => string): Inline {
  return {
    text: new RunText(tidy),
    budget,
    rendered: { before: 0, after: 0 },
    explicit: { before: 0, after: 0 },
    imageIds: [],
    graphics: [],
    textboxes: [],
    allBold: true,
    minSize: null,
    sawText: false,
  };
}

function pageBreak(acc: Inline, breaks: Breaks): void {
  if (acc.sawText) breaks.after++;
  else breaks.before++;
}

export const isOn = (el: XmlElement | undefined) => el !== undefined && !['0', 'false', 'off'].includes(el.attrs['w:val'] ?? '');

export function isBold(props: XmlElement | undefined): boolean {
  return props ? isOn(child(props, 'w:b')) : false;
}

export function sizeOf(props: XmlElement | undefined): number | null {
  const value = props && child(props, 'w:sz')?.attrs['w:val'];
  const size = value ? Number.parseInt(value, 10) : Number.NaN;
  return Number.isFinite(size) ? size : null;
}
