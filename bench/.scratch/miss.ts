import { extractText, getDocumentProxy } from 'unpdf';
import { generatePdf } from '../pdf-generator.ts';

const pdf = generatePdf({ pages: 10, chartEvery: 2 });
const doc = await getDocumentProxy(pdf.bytes.slice());
const { text } = await extractText(doc, { mergePages: false });
for (const [i, t] of (text as string[]).entries()) {
  const got = new Map<string, number>();
  for (const w of t.split(/\s+/).filter(Boolean)) got.set(w, (got.get(w) ?? 0) + 1);
  const miss = [];
  for (const w of [...pdf.pageWords[i]!, String(i + 1)]) {
    const n = got.get(w) ?? 0;
    if (n) got.set(w, n - 1);
    else miss.push(w);
  }
  console.log(i + 1, 'missing', miss, 'extra', [...got].filter(([, n]) => n > 0).slice(0, 5));
}
