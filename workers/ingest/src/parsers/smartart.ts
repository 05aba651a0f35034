import type { ParseBudget } from './budget.ts';
import type { Block } from './types.ts';
import { child, children, descendants, forEachElement, textContent, type XmlText } from './xml.ts';

/**
 * SmartArt: the text of a diagram lives in its data part (`dgm:dataModel`), one point per box,
 * in the order the boxes were made. Each box with text becomes a list item where the diagram
 * sits. Layout, style and colour parts, and the drawing Office renders from them, say nothing
 * more (and reading the drawing too would say everything twice).
 */

type Place = Omit<Block, 'kind' | 'text'>;

// Point types that carry the diagram's own text; the rest are the document, connections and layout.
const TEXT_POINTS = new Set(['node', 'asst']);

/** Appends a diagram's boxes to `out` as they are read. */
export function smartArtBlocks(xml: XmlText, place: Place, budget: ParseBudget, out: Block[]): void {
  forEachElement(
    xml,
    (name, path) => name === 'dgm:pt' && path[path.length - 1] === 'dgm:ptLst',
    (pt) => {
      if (!TEXT_POINTS.has(pt.attrs.type ?? 'node')) return;
      const body = child(pt, 'dgm:t');
      if (!body) return;
      const text = children(body, 'a:p')
        .map((p) => descendants(p, 'a:t').map(textContent).join(''))
        .join(' ')
        .replace(/\s+/g, ' ')
        .trim();
      if (text !== '') out.push({ kind: 'list_item', text: budget.take(text), ...place });
    },
    budget,
  );
}
