import { parseHtml } from '../workers/ingest/src/parsers/html.ts';
import { readFileSync } from 'node:fs';
const html = readFileSync('/tmp/h7-rd.ts','utf8').split('const html = `')[1]!.split('`;')[0]!.replace(/\$\{'(.*?)'\.repeat\((\d+)\)\}/g, (_m, s, n) => s.repeat(Number(n)));
console.log(JSON.stringify(parseHtml(new TextEncoder().encode(html), 'text/html', 'https://x.test/'), null, 1).slice(0, 3000));
console.log(parseHtml(new TextEncoder().encode('<html><body><nav>Home</nav><p>Short page.</p><footer>foot</footer></body></html>'), null, 'u'));
try { parseHtml(new TextEncoder().encode('<html><body><script>x</script></body></html>'), null, 'u') } catch (e) { console.log(e) }
