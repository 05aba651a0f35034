import type { ComponentChildren } from 'preact';

/**
 * A table wider than a phone scrolls sideways in its own box rather than widening the page; the box is a named region
 * the keyboard can reach, so that it can be scrolled without a pointer.
 */
export function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling box must be reachable by keyboard (WCAG 2.1.1)
    <section class="table-scroll" tabIndex={0} aria-label={label}>
      {children}
    </section>
  );
}
