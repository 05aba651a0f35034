import { describe, expect, it } from 'vitest';
import { decodeHtml, MAX_HTML_BYTES, parseHtml } from '../../../workers/ingest/src/parsers/html.ts';
import { ParseError } from '../../../workers/ingest/src/parsers/types.ts';

const encode = (text: string) => new TextEncoder().encode(text);

/** A news-site article page: navigation, cookie banner, ads, related links, comments and footer around the story. */
const ARTICLE_PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>How tides work | Coastal Science Weekly</title>
  <meta name="description" content="The Moon, the Sun and the shape of the coast.">
  <link rel="stylesheet" href="/site.css">
  <script>window.dataLayer = [{ page: 'article' }];</script>
  <style>.ad-slot { min-height: 250px }</style>
</head>
<body>
  <div id="cookie-banner" class="gdpr-popup">We use cookies to improve your experience. <button>Accept all</button></div>
  <header class="site-header">
    <a href="/" class="logo">Coastal Science Weekly</a>
    <nav class="main-menu">
      <ul><li><a href="/news">News</a></li><li><a href="/features">Features</a></li><li><a href="/subscribe">Subscribe</a></li></ul>
    </nav>
  </header>
  <div class="breadcrumbs"><a href="/">Home</a> › <a href="/oceans">Oceans</a></div>
  <main id="content">
    <article class="post">
      <h1>How tides work</h1>
      <p class="byline">By Mara Lindqvist · 12 March 2024</p>
      <p>Twice a day, most coastlines see the sea rise and fall by anything from a few centimetres to more than
      fifteen metres. These movements, the <em>tides</em>, are driven by the gravitational pull of the Moon and,
      to a lesser degree, the Sun, acting on a rotating Earth covered in water.</p>
      <p>The Moon pulls hardest on the ocean nearest to it, drawing the water into a bulge. On the opposite side
      of the planet a second bulge forms, because there the Moon pulls the solid Earth away from the water more
      strongly than it pulls the water itself. As the Earth turns beneath these two bulges, a given coast passes
      through two high tides and two low tides in a little over a day.</p>
      <div class="ad-slot sponsor-banner">Advertisement: Luxury yacht charters from €999 — book today!</div>
      <h2>Spring and neap tides</h2>
      <p>When the Sun, Moon and Earth line up, at new and full moon, their pulls add together and the tidal range
      is largest: these are <strong>spring tides</strong>, which have nothing to do with the season. When the Sun
      and Moon pull at right angles, at the quarter moons, the range is smallest: <strong>neap tides</strong>.</p>
      <ul>
        <li>Spring tides: about every 14.8 days, at new and full moon.</li>
        <li>Neap tides: in between, at the first and last quarter.</li>
      </ul>
      <h3>Why some places barely have tides</h3>
      <p>The shape of a basin matters as much as astronomy. Enclosed seas such as the Mediterranean are too small
      to build a large tidal bulge, while funnel-shaped bays amplify it enormously.</p>
      <blockquote><p>The Bay of Fundy owes its record tides to resonance: the bay sloshes at almost exactly the tidal period.</p></blockquote>
      <table>
        <caption>Mean spring tidal range at selected ports</caption>
        <thead><tr><th>Port</th><th>Country</th><th>Range (m)</th></tr></thead>
        <tbody>
          <tr><td>Burntcoat Head</td><td>Canada</td><td>16.3</td></tr>
          <tr><td>Avonmouth</td><td>United Kingdom</td><td>12.2</td></tr>
          <tr><td>Naples</td><td>Italy</td><td>0.3</td></tr>
        </tbody>
      </table>
      <pre>  high water  06:12
  low water   12:25</pre>
    </article>
    <aside class="related sidebar">
      <h3>Related stories</h3>
      <ul><li><a href="/a">Ten beaches to visit this summer</a></li><li><a href="/b">Is sea level rise speeding up?</a></li></ul>
    </aside>
    <section id="comments" class="comments">
      <h3>Comments (2)</h3>
      <div class="comment"><p>Great read, thanks! Totally agree with everything.</p></div>
    </section>
  </main>
  <footer class="site-footer">
    <p>© 2024 Coastal Science Weekly. All rights reserved. Privacy policy · Terms of use</p>
    <p>Newsletter: sign up for our weekly digest.</p>
  </footer>
</body>
</html>`;

describe('parseHtml on an article page', () => {
  const doc = parseHtml(encode(ARTICLE_PAGE), 'text/html; charset=utf-8', 'https://news.example.com/oceans/tides');
  const texts = doc.blocks.map((b) => b.text);
  const all = texts.join('\n');

  it('starts with the title as a level 1 heading', () => {
    expect(doc.blocks[0]).toEqual({ kind: 'heading', text: 'How tides work', level: 1 });
    expect(doc.blocks.filter((b) => b.kind === 'heading' && b.level === 1)).toHaveLength(1);
  });

  it('keeps the article text, headings and their levels', () => {
    expect(all).toContain('Twice a day, most coastlines see the sea rise and fall');
    expect(all).toContain('the tides, are driven by the gravitational pull of the Moon');
    expect(doc.blocks).toContainEqual({ kind: 'heading', text: 'Spring and neap tides', level: 2 });
    expect(doc.blocks).toContainEqual({ kind: 'heading', text: 'Why some places barely have tides', level: 3 });
    expect(doc.blocks).toContainEqual({ kind: 'list_item', text: 'Spring tides: about every 14.8 days, at new and full moon.' });
    expect(doc.blocks).toContainEqual({
      kind: 'paragraph',
      text: 'The Bay of Fundy owes its record tides to resonance: the bay sloshes at almost exactly the tidal period.',
    });
    // Block order follows the page.
    const spring = texts.indexOf('Spring and neap tides');
    const basin = texts.indexOf('Why some places barely have tides');
    expect(spring).toBeGreaterThan(0);
    expect(basin).toBeGreaterThan(spring);
  });

  it('turns table rows into "Header: value" lines', () => {
    const rows = doc.blocks.filter((b) => b.kind === 'table_row').map((b) => b.text);
    expect(rows).toEqual([
      'Port: Burntcoat Head; Country: Canada; Range (m): 16.3',
      'Port: Avonmouth; Country: United Kingdom; Range (m): 12.2',
      'Port: Naples; Country: Italy; Range (m): 0.3',
    ]);
    expect(texts).toContain('Mean spring tidal range at selected ports');
  });

  it('keeps preformatted text line by line', () => {
    expect(texts).toContain('  high water  06:12\n  low water   12:25');
  });

  it('drops navigation, ads, banners, related links, comments, scripts and footer', () => {
    for (const boilerplate of [
      'Subscribe',
      'We use cookies',
      'Accept all',
      'Luxury yacht',
      'Related stories',
      'Ten beaches',
      'Great read',
      'All rights reserved',
      'Newsletter',
      'dataLayer',
      'min-height',
    ]) {
      expect(all).not.toContain(boilerplate);
    }
  });

  it('collapses whitespace and reports no problems', () => {
    const prose = texts.filter((t) => !t.includes('\n'));
    expect(prose.length).toBe(texts.length - 1);
    expect(prose.every((t) => t.length > 0 && t === t.trim() && !/\s{2,}/.test(t))).toBe(true);
    expect(doc.warnings).toEqual([]);
    expect(doc.images).toEqual([]);
  });
});

describe('parseHtml character sets', () => {
  // "Café crème — naïve" in windows-1252: é=E9, è=E8, —=97, ï=EF.
  const cp1252 = (text: string) =>
    Uint8Array.from(text, (ch) => {
      const special: Record<string, number> = { é: 0xe9, è: 0xe8, '—': 0x97, ï: 0xef, '“': 0x93, '”': 0x94 };
      return special[ch] ?? ch.charCodeAt(0);
    });
  const page = (meta: string) =>
    `<html><head>${meta}<title>Café crème</title></head><body><article><h1>Café crème</h1><p>${'A naïve “recipe” — with crème fraîche. '.replace('î', 'i').repeat(20)}</p></article></body></html>`;

  it('decodes windows-1252 bytes named by <meta charset>', () => {
    const doc = parseHtml(cp1252(page('<meta charset="windows-1252">')), 'text/html', 'https://example.com/');
    expect(doc.blocks[0]).toEqual({ kind: 'heading', text: 'Café crème', level: 1 });
    expect(doc.blocks[1]?.text).toContain('A naïve “recipe” — with crème fraiche.');
  });

  it('reads the charset from <meta http-equiv> too, and lets the header win over the page', () => {
    const httpEquiv = cp1252(page('<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">'));
    expect(parseHtml(httpEquiv, null, 'https://example.com/').blocks[0]?.text).toBe('Café crème');
    const utf8 = encode(page('<meta charset="windows-1252">'));
    expect(parseHtml(utf8, 'text/html; charset=UTF-8', 'https://example.com/').blocks[0]?.text).toBe('Café crème');
  });

  it('defaults to UTF-8 and honours a byte order mark', () => {
    expect(decodeHtml(encode('<p>naïve</p>'), null)).toBe('<p>naïve</p>');
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...encode('<p>ü</p>')]);
    expect(decodeHtml(bom, 'text/html; charset=windows-1252')).toBe('<p>ü</p>');
  });

  it('falls back to UTF-8 with a warning for an unknown charset', () => {
    const warnings: string[] = [];
    expect(decodeHtml(encode('<p>ok</p>'), 'text/html; charset=x-klingon', warnings)).toBe('<p>ok</p>');
    expect(warnings).toEqual(['The page declares the unknown character set "x-klingon"; it was read as UTF-8']);
  });
});

describe('parseHtml edge cases', () => {
  it('reads a short page without an article', () => {
    const doc = parseHtml(
      encode('<html><head><title>Opening hours</title></head><body><p>Monday to Friday, 9:00 to 17:00.</p></body></html>'),
      null,
      'https://example.com/hours',
    );
    expect(doc.blocks).toEqual([
      { kind: 'heading', text: 'Opening hours', level: 1 },
      { kind: 'paragraph', text: 'Monday to Friday, 9:00 to 17:00.' },
    ]);
  });

  it('reads loose text and nested lists', () => {
    const doc = parseHtml(
      encode(
        '<body><div>Loose text <b>with bold</b><br>and a break.</div><ul><li>One<ul><li>One.a</li></ul></li><li>Two</li></ul></body>',
      ),
      null,
      'https://example.com/',
    );
    const texts = doc.blocks.map((b) => `${b.kind}:${b.text}`);
    expect(texts).toContain('paragraph:Loose text with bold and a break.');
    expect(texts).toEqual(expect.arrayContaining(['list_item:One', 'list_item:One.a', 'list_item:Two']));
    expect(texts.indexOf('list_item:One.a')).toBe(texts.indexOf('list_item:One') + 1);
  });

  it('reads a table without a header row as plain cells', () => {
    const doc = parseHtml(
      encode(`<body><p>${'Intro text for the table. '.repeat(3)}</p><table><tr><td>a</td><td>b</td></tr></table></body>`),
      null,
      'https://example.com/',
    );
    expect(doc.blocks).toContainEqual({ kind: 'table_row', text: 'a; b' });
  });

  it.each([
    ['an empty body', '<html><head><title></title></head><body></body></html>'],
    ['only scripts and styles', '<html><body><script>var a = 1;</script><style>p{}</style><noscript></noscript></body></html>'],
    ['whitespace', '   \n\t '],
    ['no bytes', ''],
  ])('refuses %s as empty', (_what, html) => {
    let error: unknown;
    try {
      parseHtml(encode(html), 'text/html', 'https://example.com/');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ParseError);
    expect(error).toMatchObject({ reason: 'empty', message: 'The page has no readable text' });
  });

  it('refuses HTML too large to hold as a DOM', () => {
    const big = new Uint8Array(MAX_HTML_BYTES + 1).fill(0x61);
    expect(() => parseHtml(big, 'text/html', 'https://example.com/')).toThrow(ParseError);
  });
});

describe('an uploaded HTML file', () => {
  it('is read as a fetched page is, even with a script before its <head>', async () => {
    const { fixture } = await import('../../support/documents.ts');
    const doc = parseHtml(fixture('paul-graham-ideas.html'), 'text/html', '');
    expect(doc.title).toBe('How to Get New Ideas');
    expect(doc.blocks[0]).toEqual({ kind: 'heading', text: 'How to Get New Ideas', level: 1 });
    expect(doc.blocks.map((b) => b.text).join('\n')).toContain('The way to get new ideas is to notice anomalies');
  });
});
