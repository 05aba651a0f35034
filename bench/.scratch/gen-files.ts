import { writeFileSync } from 'node:fs';
import { generatePdf } from '../pdf-generator.ts';

const t0 = performance.now();
const a = generatePdf({ pages: 100, chartEvery: 2, seed: 1 });
writeFileSync('/tmp/benchscratch/text-100p.pdf', a.bytes);
const b = generatePdf({ pages: 200, photoEvery: 10, chartEvery: 2, seed: 2 });
writeFileSync('/tmp/benchscratch/mixed-50mb.pdf', b.bytes);
console.log(a.bytes.byteLength, b.bytes.byteLength, b.photos, b.charts, b.photoBytes, performance.now() - t0);
