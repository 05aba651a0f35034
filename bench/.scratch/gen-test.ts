import { writeFileSync } from 'node:fs';
import { extractText, getDocumentProxy } from 'unpdf';
import { generatePdf } from '../pdf-generator.ts';

const t0 = performance.now();
const pdf = generatePdf({
  pages: Number(process.argv[2] ?? 100),
  photoEvery: Number(process.argv[3] ?? 0),
  chartEvery: Number(process.argv[4] ?? 0),
});
console.log(
  'gen ms',
  performance.now() - t0,
  'bytes',
  pdf.bytes.byteLength,
  'images',
  pdf.images,
  'imageBytes',
  pdf.imageBytes,
  'words',
  pdf.pageWords.flat().length,
);
writeFileSync('/tmp/gen.pdf', pdf.bytes);
const doc = await getDocumentProxy(pdf.bytes.slice());
const { totalPages, text } = await extractText(doc, { mergePages: false });
console.log('pages', totalPages);
let ok = 0,
  total = 0;
for (const [i, t] of (text as string[]).entries()) {
  const got = t.split(/\s+/).filter(Boolean);
  const want = [...pdf.pageWords[i]!, String(i + 1)];
  const set = new Map<string, number>();
  for (const w of got) set.set(w, (set.get(w) ?? 0) + 1);
  for (const w of want) {
    total++;
    const n = set.get(w) ?? 0;
    if (n > 0) {
      ok++;
      set.set(w, n - 1);
    }
  }
  if (i === 0) console.log(t.slice(0, 600));
}
console.log('word match', ok, '/', total);
