import type { ParseBudget } from './budget.ts';
import type { Block } from './types.ts';

/**
 * What html.ts needs of linkedom's DOM, and the reading that works on any tree: a walk without
 * recursion, the size check made before Readability, and plain text extraction for pages too
 * deep for anything else. Workers' type library has no DOM, and linkedom's types lean on it,
 * so this file states what it relies on.
 */

export interface DomNode {
  nodeType: number;
  nodeValue: string | null;
  childNodes: ArrayLike<DomNode>;
  textContent: string | null;
  firstChild: DomNode | null;
  nextSibling: DomNode | null;
  parentNode: DomNode | null;
}
export interface DomElement extends DomNode {
  localName: string;
  hasAttribute(name: string): boolean;
  querySelector(selector: string): DomElement | null;
}
export interface DomDocument {
  title: string;
  body: DomElement | null;
  documentElement: DomElement | null;
  querySelector(selector: string): DomElement | null;
}

export const TEXT_NODE = 3;
export const ELEMENT_NODE = 1;

/** Never text a reader sees. */
export const SKIPPED = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'math',
  'canvas',
  'iframe',
  'object',
  'embed',
  'head',
  'button',
  'select',
  'input',
  'textarea',
]);
/** Page chrome, dropped when Readability found no article and the whole body is read. */
export const CHROME = new Set(['nav', 'header', 'footer', 'aside', 'form', 'dialog']);
export const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
/** Elements whose own text is one paragraph. */
export const PARAGRAPHS = new Set(['p', 'dt', 'dd', 'figcaption', 'caption', 'summary', 'address', 'legend']);
/** Elements that start a new block; inline elements inside them join the surrounding text. */
export const BLOCK_LEVEL = new Set([
  ...HEADINGS,
  ...PARAGRAPHS,
  ...CHROME,
  'div',
  'section',
  'article',
  'main',
  'body',
  'blockquote',
  'pre',
  'ul',
  'ol',
  'li',
  'dl',
  'table',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'td',
  'th',
  'figure',
  'details',
  'fieldset',
  'hr',
  'center',
]);

export function isElement(node: DomNode): node is DomElement {
  return node.nodeType === ELEMENT_NODE;
}

export function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Visits a tree in document order without recursion: `enter` an element (false skips what is
 * inside it), `exit` it after its content, `text` for text nodes. Each node is a step of the budget.
 */
export function walk(
  root: DomNode,
  budget: ParseBudget,
  visit: { enter(el: DomElement): boolean; exit(el: DomElement): void; text(text: string): void },
): void {
  let node = root.firstChild;
  while (node) {
    budget.work();
    if (node.nodeType === TEXT_NODE) visit.text(node.nodeValue ?? '');
    else if (isElement(node) && visit.enter(node)) {
      if (node.firstChild) {
        node = node.firstChild;
        continue;
      }
      visit.exit(node);
    }
    while (node && node !== root && !node.nextSibling) {
      node = node.parentNode;
      if (node && node !== root && isElement(node)) visit.exit(node);
    }
    if (!node || node === root) return;
    node = node.nextSibling;
  }
}

/**
 * Whether a tree stays within `maxNodes` nodes and `maxDepth` levels, counted only as far as
 * needed. Readability's scoring walks ancestors and descendants of every candidate, which is
 * quadratic on deep nesting (11 KB of nested divs took 7.9 s), and the recursive reading
 * below it would overflow the stack.
 */
export function withinShape(root: DomNode, maxNodes: number, maxDepth: number): boolean {
  let nodes = 0;
  let depth = 0;
  let node = root.firstChild;
  while (node) {
    if (++nodes > maxNodes) return false;
    if (node.firstChild) {
      if (++depth > maxDepth) return false;
      node = node.firstChild;
      continue;
    }
    while (node && node !== root && !node.nextSibling) {
      node = node.parentNode;
      depth--;
    }
    if (!node || node === root) return true;
    node = node.nextSibling;
  }
  return true;
}

/**
 * The page as plain paragraphs: the text of everything a reader sees, broken where block-level
 * elements begin and end. For pages too deep to read by structure; linear in the page's size.
 */
export function plainTextBlocks(root: DomNode, budget: ParseBudget, blocks: Block[]): void {
  let text = '';
  const flush = () => {
    const paragraph = collapse(text);
    text = '';
    const kept = paragraph === '' ? '' : budget.take(paragraph);
    if (kept !== '') blocks.push({ kind: 'paragraph', text: kept });
  };
  walk(root, budget, {
    enter(el) {
      const tag = el.localName.toLowerCase();
      if (SKIPPED.has(tag) || el.hasAttribute('hidden')) return false;
      if (BLOCK_LEVEL.has(tag) || tag === 'br') flush();
      return true;
    },
    exit(el) {
      if (BLOCK_LEVEL.has(el.localName.toLowerCase())) flush();
    },
    text(value) {
      text += value;
    },
  });
  flush();
}
