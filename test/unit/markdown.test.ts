import { parseHTML } from 'linkedom';
import { h, render as renderInto } from 'preact';
import { act } from 'preact/test-utils';
import { render } from 'preact-render-to-string';
import { describe, expect, it } from 'vitest';
import type { Source } from '../../client/index.ts';
import { isSafeLink, Markdown } from '../../web/src/markdown/render.ts';

const source = (name: string, text: string, page: Source['page'] = null): Source => ({
  source: name,
  chunk_index: 0,
  text,
  score: 0.5,
  page,
  heading: null,
  document_id: null,
  collection_id: null,
  image_url: null,
  rerank_score: null,
  chunk_type: 'text',
});
const sources = [source('trial.pdf', 'Telephone counseling raised screening. '.repeat(20), 4), source('notes.md', 'Short.')];

const html = (text: string) => render(h(Markdown, { text, sources, onCite: () => {} }));

describe('Markdown', () => {
  it('renders GFM tables, in a scroller, with alignment as classes', () => {
    const out = html('| Drug | Dose |\n|:--|--:|\n| A | 5 mg |\n| B | 10 mg |');
    expect(out).toContain('<div class="table-scroll"><table><thead><tr><th class="align-left">Drug</th>');
    expect(out).toContain('<th class="align-right">Dose</th>');
    expect(out).toContain('<tbody><tr><td class="align-left">A</td><td class="align-right">5 mg</td></tr>');
    expect(out).not.toContain('style=');
  });

  it('renders lists, fences, emphasis and inline code', () => {
    expect(html('- one\n- two')).toBe('<div class="markdown"><ul><li>one</li><li>two</li></ul></div>');
    expect(html('3. three\n4. four')).toContain('<ol start="3"><li>three</li>');
    expect(html('```ts\nconst a = 1 < 2;\n```')).toContain('<pre><code class="language-ts">const a = 1 &lt; 2;\n</code></pre>');
    expect(html('```"><x\nx\n```')).toContain('<pre><code>x\n</code></pre>');
    expect(html('**bold**, *em*, ~~gone~~ and `code`')).toBe(
      '<div class="markdown"><p><strong>bold</strong>, <em>em</em>, <s>gone</s> and <code>code</code></p></div>',
    );
    expect(html('line one  \nline two')).toContain('line one<br/>line two');
  });

  it('shows headings no higher than h3', () => {
    expect(html('# Top\n\n## Next\n\n##### Low')).toBe('<div class="markdown"><h3>Top</h3><h4>Next</h4><h6>Low</h6></div>');
  });

  it('links only to web, mail and relative addresses, in a new tab', () => {
    expect(html('[a](https://example.com/x?y=1)')).toContain(
      '<a href="https://example.com/x?y=1" rel="noopener noreferrer nofollow" target="_blank">a</a>',
    );
    expect(html('[mail](mailto:a@example.com) [doc](/documents/1#p2)')).toContain('href="/documents/1#p2"');
    for (const url of ['https://a.example', 'HTTP://a.example', 'mailto:x@y.z', '/a', 'a/b', '#top', '?q=1', '//cdn.example/x']) {
      expect(isSafeLink(url), url).toBe(true);
    }
    for (const url of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      ' javascript:alert(1)',
      'java\tscript:alert(1)',
      'java\nscript:alert(1)',
      'java%73cript:alert(1)',
      'vbscript:msgbox(1)',
      'data:text/html;base64,PHNjcmlwdD4=',
      'data:image/png;base64,AAAA',
      'file:///etc/passwd',
      'ftp://example.com',
    ]) {
      expect(isSafeLink(url), url).toBe(false);
    }
  });

  it('leaves hostile answers inert, with their raw HTML visible as text', () => {
    const hostile = [
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      '<iframe src="https://evil.example"></iframe>',
      '[x](javascript:alert(1))',
      '[x](JAVASCRIPT:alert(1))',
      '[x](java&#115;cript:alert(1))',
      '[x](java&#x09;script:alert(1))',
      '[x](<java script:alert(1)>)',
      '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
      '[x](vbscript:msgbox(1))',
      '![p](https://evil.example/p.png)',
      '![p](javascript:alert(1))',
      '<a href="javascript:alert(1)">x</a>',
      '<javascript:alert(1)>',
      '<data:text/html,<script>alert(1)</script>>',
      '[x][evil]\n\n[evil]: javascript:alert(1)',
      '<svg onload=alert(1)>',
    ];
    for (const text of hostile) {
      const out = html(text);
      const tags = out.match(/<[a-z][^>]*>/gi) ?? [];
      expect(tags, text).not.toContainEqual(expect.stringMatching(/^<(script|iframe|img|svg)\b/i));
      expect(tags, text).not.toContainEqual(expect.stringMatching(/\son\w+=/i));
      expect(tags, text).not.toContainEqual(expect.stringMatching(/\shref="(?!https:|\/)/i));
    }
    expect(html('<script>alert(1)</script>')).toContain('&lt;script>alert(1)&lt;/script>');
    expect(html('<img src=x onerror=alert(1)>')).toContain('&lt;img src=x onerror=alert(1)>');
    // An image is never fetched: its alt text stands in for it.
    expect(html('See ![the chart](https://evil.example/p.png).')).toBe('<div class="markdown"><p>See the chart.</p></div>');
  });

  it('turns citation markers into chips named after their source', () => {
    const out = html('Screening rose [1]. Both agree [1, 2][2]. A range [1-2]. Unknown [7]. Not one: x[0], [1000].');
    const labels = [...out.matchAll(/<button type="button" class="cite" aria-label="([^"]+)"[^>]*>(\d+)<\/button>/g)].map(
      (match) => `${match[2]} ${match[1]}`,
    );
    expect(labels).toEqual([
      '1 Source 1: trial.pdf',
      '1 Source 1: trial.pdf',
      '2 Source 2: notes.md',
      '2 Source 2: notes.md',
      '1 Source 1: trial.pdf',
      '2 Source 2: notes.md',
      '7 Source 7 (not among the sources)',
    ]);
    expect(out).toContain('x[0], [1000].');
    // Each chip's preview is described by id, hidden until hover or focus, with place and a short excerpt.
    const [, describedBy] = /aria-describedby="([^"]+)"/.exec(out) ?? [];
    expect(out).toContain(`id="${describedBy}" role="tooltip" class="cite-preview" hidden`);
    expect(out).toContain('<span class="cite-name">trial.pdf</span><span class="cite-place">page 4</span>');
    const excerpt = /<span class="cite-excerpt">([^<]*)<\/span>/.exec(out)?.[1] ?? '';
    expect(excerpt.length).toBeLessThanOrEqual(241);
    expect(excerpt.endsWith('…')).toBe(true);
  });

  it('keeps markers in code and link text as text', () => {
    const out = html('`a[1]` and [see [1]](https://example.com)');
    expect(out).not.toContain('<button');
    expect(out).toContain('<code>a[1]</code>');
  });

  it('renders every prefix of a streaming answer without throwing', () => {
    const answer =
      '## Findings\n\n| Arm | Rate |\n|---|--:|\n| Phone | 71% [1] |\n| Print | 67% [2] |\n\n' +
      '1. First **point [1]**\n2. `code\n\n```python\nprint("unfinished")\n\n> quote [x](https://a.example)\n';
    for (let end = 0; end <= answer.length; end++) expect(() => html(answer.slice(0, end))).not.toThrow();
    expect(html('```js\nconst half =')).toContain('<pre><code class="language-js">const half =</code></pre>');
    expect(html('| a | b |\n|:-')).toBe('<div class="markdown"><p>| a | b |\n|:-</p></div>');
    expect(html('| a | b |\n|---|---|\n| 1 |')).toContain('<tbody><tr><td>1</td><td></td></tr></tbody>');
  });

  it('shows a preview on focus and hover, hides it on Escape, and reports a click', () => {
    // linkedom's DOM, for the chip's events and its Escape listener on the document.
    const { window, document } = parseHTML('<!doctype html><html><body><div></div></body></html>');
    Object.assign(globalThis, { window, document });
    try {
      const cited: number[] = [];
      const root = document.querySelector('div') as unknown as HTMLElement;
      act(() => renderInto(h(Markdown, { text: 'Rose [2].', sources, onCite: (n) => cited.push(n) }), root));
      const anchor = root.querySelector('.cite-anchor') as HTMLElement;
      const button = root.querySelector('button') as HTMLButtonElement;
      const preview = root.querySelector('[role=tooltip]') as HTMLElement;
      const fire = (target: EventTarget, type: string, init: object = {}) =>
        act(() => {
          target.dispatchEvent(Object.assign(new window.Event(type), init));
        });

      expect(preview.hidden).toBe(true);
      fire(button, 'focus');
      expect(preview.hidden).toBe(false);
      fire(document, 'keydown', { key: 'Escape' });
      expect(preview.hidden).toBe(true);
      fire(anchor, 'mouseenter');
      expect(preview.hidden).toBe(false);
      fire(anchor, 'mouseleave');
      expect(preview.hidden).toBe(true);
      fire(button, 'click');
      expect(cited).toEqual([2]);
    } finally {
      Object.assign(globalThis, { window: undefined, document: undefined });
    }
  });
});
