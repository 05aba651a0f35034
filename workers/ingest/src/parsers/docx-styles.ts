import { type Inline, isBold, sizeOf } from './docx-runs.ts';
import { isRelType, type OoxmlPackage, type Relationship } from './ooxml.ts';
import { child, children, type XmlElement } from './xml.ts';

/** DOCX paragraph styles, and what a paragraph's style (or its look) makes it: a heading or a list item. */

interface Style {
  name: string;
  basedOn?: string;
  outline?: number;
  numbered: boolean;
  bold?: boolean;
  size?: number;
}

export interface Styles {
  byId: Map<string, Style>;
  defaultParagraph?: string;
  /** Body text size in half-points. */
  bodySize: number;
}

function styleChain(styleId: string | undefined, styles: Styles): Style[] {
  const chain: Style[] = [];
  let id = styleId ?? styles.defaultParagraph;
  while (id && chain.length < 10) {
    const style = styles.byId.get(id);
    if (!style) break;
    chain.push(style);
    id = style.basedOn;
  }
  return chain;
}

export function headingLevel(styleId: string | undefined, props: XmlElement | undefined, styles: Styles): number | undefined {
  const direct = props && child(props, 'w:outlineLvl')?.attrs['w:val'];
  const outline = direct !== undefined ? Number.parseInt(direct, 10) : undefined;
  if (outline !== undefined && outline >= 0 && outline < 9) return Math.min(6, outline + 1);
  for (const style of styleChain(styleId, styles)) {
    const name = style.name.toLowerCase();
    const match = /^heading\s*(\d)$/.exec(name);
    if (match) return Math.min(6, Math.max(1, Number(match[1])));
    if (name === 'title') return 1;
    if (name === 'subtitle') return 2;
    if (style.outline !== undefined && style.outline < 9) return Math.min(6, style.outline + 1);
  }
  return undefined;
}

/** Documents that make headings by hand: a short all-bold line set well above body size. */
export function lookedLikeHeading(text: string, acc: Inline, styleId: string | undefined, styles: Styles): number | undefined {
  if (text.length > 120 || text.includes('\n') || /[.:;,]$/.test(text) || !acc.sawText) return undefined;
  const chain = styleChain(styleId, styles);
  const styleBold = chain.find((s) => s.bold !== undefined)?.bold ?? false;
  const styleSize = chain.find((s) => s.size !== undefined)?.size ?? styles.bodySize;
  const bold = acc.allBold || styleBold;
  const size = acc.minSize === null || acc.minSize === 0 ? styleSize : acc.minSize;
  if (!bold) return undefined;
  if (size >= styles.bodySize * 1.6) return 1;
  if (size >= styles.bodySize * 1.25) return 2;
  return undefined;
}

export function isListItem(styleId: string | undefined, props: XmlElement | undefined, styles: Styles): boolean {
  const numId = props && child(props, 'w:numPr') && child(child(props, 'w:numPr')!, 'w:numId')?.attrs['w:val'];
  if (numId !== undefined) return numId !== '0';
  return styleChain(styleId, styles).some((s) => s.numbered || /^list (bullet|number)/i.test(s.name));
}

export function readStyles(pkg: OoxmlPackage, rels: Map<string, Relationship>): Styles {
  const styles: Styles = { byId: new Map(), bodySize: 22 };
  const rel = [...rels.values()].find((r) => isRelType(r, 'styles') && !r.external);
  const root = rel ? pkg.tree(rel.target) : null;
  if (!root) return styles;
  const defaultSize = sizeOf(child(child(child(root, 'w:docDefaults') ?? root, 'w:rPrDefault') ?? root, 'w:rPr'));
  for (const el of children(root, 'w:style')) {
    const id = el.attrs['w:styleId'];
    if (!id || (el.attrs['w:type'] && el.attrs['w:type'] !== 'paragraph')) continue;
    const pPr = child(el, 'w:pPr');
    const rPr = child(el, 'w:rPr');
    const outline = pPr && child(pPr, 'w:outlineLvl')?.attrs['w:val'];
    const style: Style = {
      name: child(el, 'w:name')?.attrs['w:val'] ?? id,
      numbered: pPr !== undefined && child(pPr, 'w:numPr') !== undefined,
      ...(child(el, 'w:basedOn')?.attrs['w:val'] ? { basedOn: child(el, 'w:basedOn')!.attrs['w:val']! } : {}),
      ...(outline !== undefined ? { outline: Number.parseInt(outline, 10) } : {}),
      ...(rPr && child(rPr, 'w:b') ? { bold: isBold(rPr) } : {}),
      ...(sizeOf(rPr) !== null ? { size: sizeOf(rPr)! } : {}),
    };
    styles.byId.set(id, style);
    if (el.attrs['w:default'] === '1' || el.attrs['w:default'] === 'true') styles.defaultParagraph = id;
  }
  const normal = styles.defaultParagraph ? styles.byId.get(styles.defaultParagraph)?.size : undefined;
  styles.bodySize = normal ?? defaultSize ?? 22;
  return styles;
}
