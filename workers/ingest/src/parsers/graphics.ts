import type { ParseBudget } from './budget.ts';
import { chartBlocks } from './chart.ts';
import type { OoxmlPackage, Relationship } from './ooxml.ts';
import { smartArtBlocks } from './smartart.ts';
import { type Block, ParseError } from './types.ts';
import { descendants, type XmlElement } from './xml.ts';

/**
 * Charts and SmartArt placed in a slide, a document or a sheet's drawing: the frame holds only
 * a relationship id; the text is in the part it points to. Each format's parser finds the
 * frames where it finds pictures, and turns them into blocks here, placed where they sit.
 */

export interface GraphicRef {
  kind: 'chart' | 'smartart';
  /** Relationship id, in the rels of the part holding the frame. */
  id: string;
}

/** The charts and SmartArt inside a drawing element (`p:graphicFrame`, `w:drawing`, `xdr:graphicFrame`). */
export function graphicRefs(el: XmlElement, out: GraphicRef[] = []): GraphicRef[] {
  for (const chart of descendants(el, 'c:chart')) if (chart.attrs['r:id']) out.push({ kind: 'chart', id: chart.attrs['r:id'] });
  for (const ids of descendants(el, 'dgm:relIds')) if (ids.attrs['r:dm']) out.push({ kind: 'smartart', id: ids.attrs['r:dm'] });
  return out;
}

type Place = Omit<Block, 'kind' | 'text'>;

/**
 * Appends the blocks of the graphics `refs` point to, to `out`. A chart part that is missing, broken or past the
 * package's inflate budget costs that chart, with a warning, not the document; a DTD or a zip
 * bomb anywhere still refuses it, and a spent budget still stops the parser. With `headingLevel`,
 * the first titled chart's title becomes a heading too; returns whether one did.
 */
export function graphicBlocks(
  pkg: OoxmlPackage,
  refs: readonly GraphicRef[],
  rels: Map<string, Relationship>,
  place: Place,
  budget: ParseBudget,
  out: Block[],
  headingLevel?: number,
): boolean {
  let headed = false;
  for (const ref of refs) {
    const rel = rels.get(ref.id);
    if (!rel || rel.external) continue;
    const what = ref.kind === 'chart' ? 'chart' : 'SmartArt diagram';
    try {
      const xml = pkg.text(rel.target);
      if (xml === null) {
        budget.note(`A ${what} is missing from the file`);
        continue;
      }
      if (ref.kind === 'chart') headed = chartBlocks(xml, place, budget, out, headed ? undefined : headingLevel) || headed;
      else smartArtBlocks(xml, place, budget, out);
    } catch (error) {
      if (!(error instanceof ParseError) || error.reason === 'unsafe') throw error;
      budget.note(error.reason === 'too_large' ? `A ${what} was too large to read` : `A ${what} could not be read`);
    }
  }
  return headed;
}
