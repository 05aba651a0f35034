import { parseHTML } from 'linkedom/worker';
import { Readability } from '@mozilla/readability';
const html = `<!doctype html><html><head><title>Tides explained | Ocean Weekly</title><meta charset="utf-8"></head><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li></ul></nav>
<div class="ad">Buy now! Great deals on boats.</div>
<main><article><h1>Tides explained</h1><p class="byline">By Ann</p>
<p>Tides are the rise and fall of sea levels caused by the combined effects of the gravitational forces exerted by the Moon and the Sun, and the rotation of the Earth. ${'More words about tides and oceans. '.repeat(20)}</p>
<h2>Spring and neap tides</h2><p>Spring tides happen when the Sun and Moon align. ${'Neap tides are weaker. '.repeat(15)}</p>
<ul><li>High tide</li><li>Low tide</li></ul>
<table><thead><tr><th>Port</th><th>Range (m)</th></tr></thead><tbody><tr><td>Brest</td><td>7.2</td></tr><tr><td>Dover</td><td>6.0</td></tr></tbody></table>
</article></main><footer>Copyright 2024 Ocean Weekly. All rights reserved.</footer></body></html>`;
const { document } = parseHTML(html);
console.log('baseURI', (document as any).baseURI, (document as any).documentURI);
const r = new Readability(document as any, { serializer: (n) => n }).parse();
console.log(r?.title, (r?.content as any)?.outerHTML);
