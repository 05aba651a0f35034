import MarkdownIt, { type Token } from 'markdown-it';
import { type ComponentChildren, h, type JSX } from 'preact';
import type { Source } from '../../../client/index.ts';
import { withCitations } from './cite.ts';

// Answers are model output, and the model has read whatever the documents said: this renderer builds vnodes
// from markdown-it's tokens itself, never HTML, and renders only the constructs it knows.
// A .ts file with h(), not JSX: the unit tests import it, and their tsconfig refuses .tsx files.

interface Props {
  text: string;
  sources: Source[];
  onCite: (n: number) => void;
}

// Browsers ignore tabs and newlines inside a URL and spaces before it, so "java\tscript:" runs; the check
// drops every space and control character before it looks for a scheme.
const IGNORED_BY_BROWSERS = /[\s\p{Cc}]/gu;
const ALLOWED_SCHEME = /^(?:https?|mailto):/i;
// Anything before the first ":" that precedes every "/", "?" and "#" is a scheme, percent-escaped or not.
const ANY_SCHEME = /^[^/?#]*:/;

/** Only web and mail links, and relative ones. markdown-it has decoded entities in the URL before it asks. */
export function isSafeLink(url: string): boolean {
  const bare = url.replace(IGNORED_BY_BROWSERS, '');
  return ALLOWED_SCHEME.test(bare) || !ANY_SCHEME.test(bare);
}

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
md.validateLink = isSafeLink;
// Without link reference definitions, a stray "[1]: …" line cannot turn the citation markers into links.
md.disable('reference');

const LANGUAGE = /^[\w-]+$/;
const ALIGNMENT = /text-align:(left|center|right)/;
// Containers drawn as the element markdown-it names, with no attributes.
const PLAIN = new Set([
  'blockquote_open',
  'bullet_list_open',
  'list_item_open',
  'thead_open',
  'tbody_open',
  'tr_open',
  'em_open',
  'strong_open',
  's_open',
]);

interface Frame {
  token: Token;
  children: ComponentChildren[];
}

interface Context {
  sources: Source[];
  onCite: (n: number) => void;
}

function container(token: Token, children: ComponentChildren[]): ComponentChildren {
  if (PLAIN.has(token.type)) return h(token.tag, null, children);
  switch (token.type) {
    // A tight list's paragraphs are hidden: their text sits in the item itself.
    case 'paragraph_open':
      return token.hidden ? children : h('p', null, children);
    // The page's own headings outrank the answer's: h1 is shown as h3, and nothing goes below h6.
    case 'heading_open':
      return h(`h${Math.min(Number(token.tag.slice(1)) + 2, 6)}`, null, children);
    case 'ordered_list_open':
      return h('ol', { start: token.attrGet('start') ?? undefined }, children);
    // Its own scroller, so that a wide table never makes a phone's page scroll sideways.
    case 'table_open':
      return h('div', { class: 'table-scroll' }, h('table', null, children));
    case 'th_open':
    case 'td_open': {
      const align = ALIGNMENT.exec(String(token.attrGet('style')))?.[1];
      return h(token.tag, { class: align && `align-${align}` }, children);
    }
    case 'link_open': {
      const href = String(token.attrGet('href'));
      if (!isSafeLink(href)) return children;
      const title = token.attrGet('title') ?? undefined;
      return h('a', { href, title, rel: 'noopener noreferrer nofollow', target: '_blank' }, children);
    }
    default:
      return children;
  }
}

const textOf = (tokens: Token[]): string =>
  tokens.map((token) => (token.children ? textOf(token.children) : token.content)).join('');

function leaf(token: Token, context: Context, inLink: boolean): ComponentChildren {
  switch (token.type) {
    case 'inline':
      return render(token.children ?? [], context);
    // A button inside a link is invalid HTML, so a marker in a link's text stays text.
    case 'text':
      return inLink ? token.content : withCitations(token.content, context.sources, context.onCite);
    case 'softbreak':
      return '\n';
    case 'hardbreak':
      return h('br', null);
    case 'hr':
      return h('hr', null);
    case 'code_inline':
      return h('code', null, token.content);
    case 'fence':
    case 'code_block': {
      const language = token.info.trim().split(/\s+/)[0] ?? '';
      return h('pre', null, h('code', { class: LANGUAGE.test(language) ? `language-${language}` : undefined }, token.content));
    }
    // Never loaded: an answer must not make the browser fetch an address it names. Its alt text stands in.
    case 'image':
      return textOf(token.children ?? []);
    default:
      return token.content;
  }
}

/** markdown-it's flat token stream as a tree: each _open token collects what follows until its _close. */
function render(tokens: Token[], context: Context): ComponentChildren[] {
  const root: ComponentChildren[] = [];
  const open: Frame[] = [];
  const childrenOfTop = () => open.at(-1)?.children ?? root;
  const close = () => {
    const frame = open.pop() as Frame;
    childrenOfTop().push(container(frame.token, frame.children));
  };
  for (const token of tokens) {
    if (token.nesting === 1) open.push({ token, children: [] });
    else if (token.nesting === -1) {
      if (open.length > 0) close();
    } else {
      const inLink = open.some((frame) => frame.token.type === 'link_open');
      childrenOfTop().push(leaf(token, context, inLink));
    }
  }
  // markdown-it closes what it opens, even mid-stream; this is for whatever it might not.
  while (open.length > 0) close();
  return root;
}

/** An answer's Markdown, with its `[n]` markers as chips that preview sources[n - 1]. */
export function Markdown({ text, sources, onCite }: Props): JSX.Element {
  return h('div', { class: 'markdown' }, render(md.parse(text, {}), { sources, onCite }));
}
