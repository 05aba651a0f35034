/** The loopback site bench/crawl/crawl.ts crawls: seeded article pages, an index and a sitemap, and the same pages as files. */
import { sitemapXml, type TestSite } from '../../devstack/harness/site-server.ts';
import { PAGES } from './settings.ts';

/** A seeded generator, so that every run serves the same pages. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const SYLLABLES = [
  'bar',
  'cal',
  'den',
  'fen',
  'gar',
  'hol',
  'kes',
  'lin',
  'mor',
  'nes',
  'or',
  'pel',
  'quin',
  'ros',
  'stan',
  'tor',
  'vel',
  'wick',
];
const THINGS = [
  'lighthouse',
  'tide mill',
  'rope walk',
  'salt works',
  'ferry',
  'observatory',
  'seed bank',
  'clock tower',
  'weir',
  'market hall',
];
const TRADES = ['keepers', 'millers', 'surveyors', 'weavers', 'engineers', 'archivists', 'pilots', 'masons'];
const VERBS = ['rebuilt', 'extended', 'surveyed', 'repaired', 'moved', 'restored', 'measured', 'replaced'];
const MATERIALS = ['granite', 'oak', 'cast iron', 'brick', 'limestone', 'copper', 'slate', 'larch'];
const MONTHS = ['January', 'March', 'April', 'June', 'August', 'September', 'October', 'December'];

/** One article's title and paragraphs: distinct names, numbers and facts on every page. */
export function article(n: number): { title: string; paragraphs: string[] } {
  const rnd = random(1000 + n);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)] as T;
  const name = (parts: number) => {
    const word = Array.from({ length: parts }, () => pick(SYLLABLES)).join('');
    return word.charAt(0).toUpperCase() + word.slice(1);
  };
  const town = name(2);
  const thing = pick(THINGS);
  const title = `The ${thing} of ${town}`;
  const year = () => 1700 + Math.floor(rnd() * 320);
  const sentence = () =>
    pick([
      () => `In ${pick(MONTHS)} ${year()} the ${pick(TRADES)} of ${town} ${pick(VERBS)} the ${thing} in ${pick(MATERIALS)}.`,
      () =>
        `${name(2)} ${name(3)}, who kept its ledgers for ${2 + Math.floor(rnd() * 40)} years, wrote that the ${thing} needed ${pick(MATERIALS)} from ${name(2)}.`,
      () =>
        `Its ${pick(['north', 'east', 'south', 'west'])} wall stands ${3 + Math.floor(rnd() * 60)} metres from the old road to ${name(2)}.`,
      () =>
        `A storm in ${year()} took ${pick(['the roof', 'two bays', 'the upper floor', 'the landing stage'])}, and the town paid ${10 + Math.floor(rnd() * 900)} pounds to have it ${pick(VERBS)}.`,
      () =>
        `Visitors can see the ${pick(['original plans', 'first lamp', 'iron gears', 'tide tables'])} in the ${name(2)} museum on ${pick(MONTHS)} weekends.`,
      () => `The ${pick(TRADES)} who worked there were paid in ${pick(['grain', 'coin', 'salt', 'cloth'])} until ${year()}.`,
    ])();
  const paragraphs = Array.from({ length: 3 + Math.floor(rnd() * 3) }, () =>
    Array.from({ length: 4 + Math.floor(rnd() * 3) }, sentence).join(' '),
  );
  return { title: `${title} (note ${n})`, paragraphs };
}

export const pagePath = (n: number) => `/notes/${String(n).padStart(4, '0')}-field-note`;

/** A page as a small site would serve it: a header and navigation, the article, related links, a footer. */
export function pageHtml(n: number, extra?: string): string {
  const { title, paragraphs } = article(n);
  const related = [n - 1, n + 1, ((n * 7) % PAGES) + 1].filter(
    (m, i, all) => m >= 1 && m <= PAGES && m !== n && all.indexOf(m) === i,
  );
  const body = extra ? [...paragraphs, extra] : paragraphs;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Coastal Field Notes</title><meta name="description" content="${body[0]?.slice(0, 150)}"></head>
<body><header><p class="site"><a href="/">Coastal Field Notes</a></p><nav><a href="/">All notes</a></nav></header>
<main><article><h1>${title}</h1><p class="byline">Field note ${n}, written up by the Coastal Survey volunteers.</p>
${body.map((paragraph) => `<p>${paragraph}</p>`).join('\n')}
<h2>Related notes</h2><ul>${related.map((m) => `<li><a href="${pagePath(m)}">${article(m).title}</a></li>`).join('')}</ul>
</article></main>
<footer><p>Coastal Field Notes is written by volunteers. Corrections are welcome at the harbour office.</p></footer></body></html>
`;
}

function indexHtml(): string {
  const items = Array.from({ length: PAGES }, (_, i) => `<li><a href="${pagePath(i + 1)}">${article(i + 1).title}</a></li>`);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Coastal Field Notes</title></head>
<body><header><p class="site">Coastal Field Notes</p></header><main><h1>All field notes</h1>
<p>Every note the Coastal Survey volunteers have written up, oldest first.</p><ul>
${items.join('\n')}
</ul></main></body></html>
`;
}

export const html = (body: string) => ({ title: '', raw: { body, type: 'text/html; charset=utf-8' } });

/** The site as first published: the index, the pages and the sitemap; no robots.txt. */
export function publish(site: TestSite) {
  site.robots(null);
  site.set('/', html(indexHtml()));
  for (let n = 1; n <= PAGES; n++) site.set(pagePath(n), html(pageHtml(n)));
  site.set('/sitemap.xml', sitemapXml([site.url('/'), ...Array.from({ length: PAGES }, (_, i) => site.url(pagePath(i + 1)))]));
}

/** The same pages as files to upload, the index included, so that both ways make the same documents. */
export const files = () => [
  { name: 'index.html', bytes: new TextEncoder().encode(indexHtml()) },
  ...Array.from({ length: PAGES }, (_, i) => ({
    name: `${pagePath(i + 1).slice('/notes/'.length)}.html`,
    bytes: new TextEncoder().encode(pageHtml(i + 1)),
  })),
];
