import { type ComponentChildren, h, type JSX } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import type { Source } from '../../../client/index.ts';
import { placeOf } from '../source/place.ts';

// A .ts file with h(), not JSX, like render.ts: the unit tests import it, and their tsconfig refuses .tsx files.

interface Props {
  /** 1-based, as the answer writes it: `[n]` cites sources[n - 1]. */
  n: number;
  sources: Source[];
  onCite: (n: number) => void;
}

// "[2]", "[1, 2]", "[1; 3]", "[1-3]": the forms the answer prompt asks for and models also use ("[1][2]" is two).
// Numbers start at 1, so that "x[0]" in prose stays text.
const MARKER = /\[\s*([1-9]\d{0,2}(?:\s*[,;–-]\s*[1-9]\d{0,2})*)\s*\]/g;
// A range is expanded, but never into a row of dozens of chips.
const LONGEST_RANGE = 20;
const EXCERPT_LENGTH = 240;

function numbersIn(group: string): number[] {
  return group.split(/\s*[,;]\s*/).flatMap((part) => {
    const [from, to = from] = part.split(/\s*[–-]\s*/).map(Number) as [number, number?];
    const last = to >= from && to - from < LONGEST_RANGE ? to : from;
    return Array.from({ length: last - from + 1 }, (_, i) => from + i);
  });
}

/** Text with its citation markers turned into chips. */
export function withCitations(text: string, sources: Source[], onCite: (n: number) => void): ComponentChildren[] {
  const parts: ComponentChildren[] = [];
  let last = 0;
  for (const match of text.matchAll(MARKER)) {
    if (match.index > last) parts.push(text.slice(last, match.index));
    for (const n of numbersIn(match[1] as string)) parts.push(h(Cite, { n, sources, onCite }));
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= EXCERPT_LENGTH) return flat;
  const cut = flat.slice(0, EXCERPT_LENGTH);
  const wordEnd = cut.lastIndexOf(' ');
  return `${wordEnd > EXCERPT_LENGTH * 0.6 ? cut.slice(0, wordEnd) : cut}…`;
}

function preview(source: Source | undefined): ComponentChildren {
  if (!source) return h('span', { class: 'cite-name' }, 'Not among this answer’s sources');
  const place = placeOf(source);
  return [
    h('span', { class: 'cite-name' }, source.source),
    place && h('span', { class: 'cite-place' }, place),
    h('span', { class: 'cite-excerpt' }, excerpt(source.text)),
  ];
}

/**
 * Placement classes for the preview, measured when it opens: it opens towards the roomier side, so that
 * it stays on screen. Classes, not coordinates, because the page's CSP allows no inline styles.
 */
function placementOf(anchor: HTMLElement | null): string {
  if (!anchor) return '';
  const { left, top } = anchor.getBoundingClientRect();
  return [left > window.innerWidth / 2 && 'end', top < window.innerHeight / 3 && 'below'].filter(Boolean).join(' ');
}

/** A citation chip: its preview shows on hover and keyboard focus, Escape hides it, a click calls onCite. */
export function Cite({ n, sources, onCite }: Props): JSX.Element {
  const source = sources[n - 1];
  const previewId = useId();
  const anchor = useRef<HTMLSpanElement>(null);
  const [open, setOpen] = useState(false);
  const [placement, setPlacement] = useState('');

  useEffect(() => {
    if (!open) return;
    // On the document, so that Escape also hides a preview opened by hovering (WCAG 1.4.13).
    const hideOnEscape = (event: KeyboardEvent) => {
      if (event.key === 'Escape') setOpen(false);
    };
    document.addEventListener('keydown', hideOnEscape);
    return () => document.removeEventListener('keydown', hideOnEscape);
  }, [open]);

  const show = () => {
    setPlacement(placementOf(anchor.current));
    setOpen(true);
  };
  const hide = () => setOpen(false);
  const label = source ? `Source ${n}: ${source.source}` : `Source ${n} (not among the sources)`;

  // The preview sits in the anchor with the button, so that moving the pointer onto it keeps it open.
  return h(
    'span',
    { class: 'cite-anchor', ref: anchor, onMouseEnter: show, onMouseLeave: hide },
    h(
      'button',
      {
        type: 'button',
        class: 'cite',
        'aria-label': label,
        'aria-describedby': previewId,
        onClick: () => onCite(n),
        onFocus: show,
        onBlur: hide,
      },
      String(n),
    ),
    h('span', { id: previewId, role: 'tooltip', class: `cite-preview ${placement}`.trim(), hidden: !open }, preview(source)),
  );
}
