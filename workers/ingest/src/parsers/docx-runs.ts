import { type GraphicRef, graphicRefs } from './graphics.ts';
import { child, descendants, textContent, type XmlElement } from './xml.ts';

/** DOCX runs: a paragraph's text, page breaks, images, charts, SmartArt and text boxes, and the formatting that can make it a heading. */

/** Page breaks seen before the first visible character, and after it. */
export interface Breaks {
  before: number;
  after: number;
}

export interface Inline {
  text: string;
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
        const text = textContent(node);
        if (text.trim() !== '') {
          acc.sawText = true;
          if (!run?.bold) acc.allBold = false;
          const size = run?.size ?? null;
          if (size !== null) acc.minSize = acc.minSize === null ? size : Math.min(acc.minSize, size);
          else acc.minSize = 0;
        }
        acc.text += text;
        break;
      }
      case 'w:tab':
      case 'w:ptab':
        acc.text += '\t';
        break;
      case 'w:cr':
        acc.text += '\n';
        break;
      case 'w:noBreakHyphen':
        acc.text += '-';
        break;
      case 'w:br': {
        const type = node.attrs['w:type'];
        if (type === 'page') {
          pageBreak(acc, acc.explicit);
        } else {
          acc.text += type === 'column' ? ' ' : '\n';
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

export function emptyInline(): Inline {
  return {
    text: '',
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
