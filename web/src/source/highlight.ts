import type { ItemRange } from './find-passage.ts';

/**
 * Marks `ranges` in pdf.js's text layer, whose spans are the text items in order (TextLayer's textDivs): a
 * span wholly in the passage gets the class, a partly covered one has its covered characters wrapped in a
 * <mark>. The span keeps its text, so the width pdf.js fitted it to stays right. Returns the marked elements
 * in page order.
 */
export function highlightItems(spans: readonly HTMLElement[], ranges: readonly ItemRange[]): HTMLElement[] {
  const marked: HTMLElement[] = [];
  const byItem = new Map<number, ItemRange[]>();
  for (const range of ranges) byItem.set(range.item, [...(byItem.get(range.item) ?? []), range]);
  for (const [item, covered] of byItem) {
    const span = spans[item];
    const text = span?.textContent ?? '';
    if (!span || text === '') continue;
    const whole = covered.length === 1 && covered[0]?.start === 0 && covered[0].end >= text.length;
    if (whole) {
      span.classList.add('pdf-highlight');
      marked.push(span);
      continue;
    }
    const pieces: Node[] = [];
    let at = 0;
    for (const { start, end } of covered) {
      if (start > at) pieces.push(document.createTextNode(text.slice(at, start)));
      const mark = document.createElement('mark');
      mark.className = 'pdf-highlight';
      mark.textContent = text.slice(start, end);
      pieces.push(mark);
      marked.push(mark);
      at = end;
    }
    if (at < text.length) pieces.push(document.createTextNode(text.slice(at)));
    span.replaceChildren(...pieces);
  }
  return marked;
}

/**
 * Centres `mark` in the box that scrolls it (the source panel), leaving the page around it where it is:
 * scrollIntoView would scroll every ancestor, the chat beside the panel too. Without such a box, the page.
 */
export function scrollToMark(mark: HTMLElement): void {
  for (let box = mark.parentElement; box; box = box.parentElement) {
    const { overflowY } = getComputedStyle(box);
    if ((overflowY === 'auto' || overflowY === 'scroll') && box.scrollHeight > box.clientHeight) {
      const offset = mark.getBoundingClientRect().top - box.getBoundingClientRect().top;
      box.scrollTo({ top: box.scrollTop + offset - box.clientHeight / 2 });
      return;
    }
  }
  mark.scrollIntoView({ block: 'center' });
}
