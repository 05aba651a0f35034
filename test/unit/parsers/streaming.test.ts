import { deflateRawSync } from 'node:zlib';
import { strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { chunkBlocks } from '../../../workers/ingest/src/chunking/chunk-blocks.ts';
import { MAX_BLOCK_CHARS } from '../../../workers/ingest/src/chunking/placed-blocks.ts';
import { ParseBudget } from '../../../workers/ingest/src/parsers/budget.ts';
import { crc32 } from '../../../workers/ingest/src/parsers/crc32.ts';
import { parseDocx } from '../../../workers/ingest/src/parsers/docx.ts';
import { parseHtml } from '../../../workers/ingest/src/parsers/html.ts';
import { MAX_DOM_ELEMENTS } from '../../../workers/ingest/src/parsers/html-stream.ts';
import { parseDocument } from '../../../workers/ingest/src/parsers/index.ts';
import { cutLongText } from '../../../workers/ingest/src/parsers/long-text.ts';
import { parseText } from '../../../workers/ingest/src/parsers/text.ts';
import { DEFAULT_PARSE_LIMITS, type ExtractedImage } from '../../../workers/ingest/src/parsers/types.ts';
import { decodeXmlPieces, forEachElement, type XmlElement } from '../../../workers/ingest/src/parsers/xml.ts';
import { openZip } from '../../../workers/ingest/src/parsers/zip.ts';
import { docx, NS, rawZip } from '../../support/ooxml-files.ts';
import { utf8 } from '../../support/parsing.ts';
import { seededRandom } from '../../support/seeded-random.ts';

/**
 * The parse step's memory bounds at the level of each part: XML parts scanned in pieces as they
 * inflate, Office images read after the text and handed over one at a time, walls of text cut
 * before they are worked on, and large pages read without a DOM (PDF decoding has its own file,
 * pdf-decode-budget.test.ts). The fresh-process peaks are test/unit/hostile-files.test.ts's.
 */

const budget = () => new ParseBudget(DEFAULT_PARSE_LIMITS);

/** `text` cut at random places into pieces, as inflating hands them over. */
function* randomPieces(text: string, seed: number, most = 40): Generator<string> {
  const random = seededRandom(seed);
  let at = 0;
  while (at < text.length) {
    const size = 1 + Math.floor(random() * most);
    yield text.slice(at, at + size);
    at += size;
  }
}

/** Every selected element, as `forEachElement` hands it over, in a form that compares by value. */
function selected(source: string | Iterable<string>): unknown[] {
  const out: unknown[] = [];
  forEachElement(
    source,
    (name) => name === 'w:p' || name === 'x:row',
    (el) => out.push(JSON.parse(JSON.stringify(el)) as XmlElement),
    budget(),
  );
  return out;
}

describe('XML scanned in pieces', () => {
  const xml = `<?xml version="1.0"?><!-- a comment with <tags> --><w:document xmlns:w="${NS.w}" xmlns:mc="${NS.mc}"><w:body>
    <w:p w:rsid='00A1' w:other="a>b"><w:r><w:t xml:space="preserve"> One &amp; two &#x263A; </w:t></w:r></w:p>
    <mc:AlternateContent><mc:Choice><w:p><w:r><w:t>chosen</w:t></w:r></w:p></mc:Choice><mc:Fallback><w:p><w:r><w:t>fallback</w:t></w:r></w:p></mc:Fallback></mc:AlternateContent>
    <w:p><w:r><w:t><![CDATA[raw <text> here]]></w:t></w:r><w:r><w:t>${'long '.repeat(2_000)}</w:t></w:r></w:p>
  </w:body></w:document>`;

  it('reads the same elements whole or cut anywhere', () => {
    const whole = selected(xml);
    expect(whole).toHaveLength(3);
    for (const seed of [1, 2, 3, 4, 5]) expect(selected(randomPieces(xml, seed))).toEqual(whole);
    // One character at a time: every token crosses a cut.
    expect(selected(randomPieces(xml, 6, 1))).toEqual(whole);
  });

  it('finds malformed XML malformed however it is cut', () => {
    const broken = xml.replace('</w:body>', '');
    expect(() => selected(broken)).toThrow(/malformed/);
    expect(() => selected(randomPieces(broken, 7))).toThrow(/malformed/);
  });

  it('decodes UTF-8 and UTF-16 (either order) cut inside a character', () => {
    const text = `<a>héllo → ${'ü'.repeat(50)} 😀</a>`;
    const le = new Uint8Array([0xff, 0xfe, ...Array.from(text).flatMap((c) => encode16(c, true))]);
    const be = new Uint8Array([0xfe, 0xff, ...Array.from(text).flatMap((c) => encode16(c, false))]);
    for (const bytes of [utf8(`\ufeff${text}`), le, be]) {
      for (const size of [1, 3, 7]) {
        const pieces: Uint8Array[] = [];
        for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.subarray(i, i + size));
        expect([...decodeXmlPieces(pieces)].join('')).toBe(text);
      }
    }
  });
});

function encode16(char: string, littleEndian: boolean): number[] {
  const out: number[] = [];
  for (let i = 0; i < char.length; i++) {
    const code = char.charCodeAt(i);
    out.push(...(littleEndian ? [code & 0xff, code >> 8] : [code >> 8, code & 0xff]));
  }
  return out;
}

describe('ZIP entries read in pieces', () => {
  const random = seededRandom(11);
  const big = strToU8(`<x>${Array.from({ length: 200_000 }, () => Math.floor(random() * 1e6)).join(' ')}</x>`);

  it('gives the entry back in pieces of a few MB at most, checked against its CRC', () => {
    const zip = openZip(zipSync({ 'a.xml': big }), { maxRatio: Number.POSITIVE_INFINITY });
    const pieces = [...zip.chunks('a.xml')!];
    expect(pieces.length).toBeGreaterThan(1);
    expect(Math.max(...pieces.map((p) => p.byteLength))).toBeLessThanOrEqual(4 * 1024 * 1024 + 32 * 1024);
    expect(Buffer.concat(pieces).equals(Buffer.from(big))).toBe(true);
    expect(zip.chunks('missing.xml')).toBeNull();

    const data = deflateRawSync(big);
    const damaged = openZip(rawZip([{ name: 'a.xml', data, method: 8, size: big.length, crc: crc32(big) ^ 1 }]), {
      maxRatio: Number.POSITIVE_INFINITY,
    });
    expect(() => [...damaged.chunks('a.xml')!]).toThrow(/checksum/);
  });

  it('counts what the pieces inflate against the package total', () => {
    const zip = openZip(zipSync({ 'a.xml': big, 'b.xml': big }), {
      maxInflatedTotal: big.length + 10,
      maxRatio: Number.POSITIVE_INFINITY,
    });
    for (const _ of zip.chunks('a.xml')!) {
      // read through
    }
    expect(() => zip.chunks('b.xml')).toThrow(/expand past the memory budget/);
  });
});

describe('Office images', () => {
  // A 100 × 80 PNG header is all the collector reads of a picture.
  const png = (width: number) =>
    Uint8Array.of(
      0x89,
      0x50,
      0x4e,
      0x47,
      0x0d,
      0x0a,
      0x1a,
      0x0a,
      0,
      0,
      0,
      13,
      0x49,
      0x48,
      0x44,
      0x52,
      0,
      0,
      0,
      width,
      0,
      0,
      0,
      80,
      8,
      2,
    );
  const pictures = [100, 101, 102];
  const body = pictures
    .map(
      (_, i) =>
        `<w:p><w:r><w:t>Figure ${i + 1}</w:t></w:r><w:r><w:drawing><a:blip xmlns:a="${NS.a}" r:embed="rIdImg${i}"/></w:drawing></w:r></w:p><w:p><w:r><w:br w:type="page"/></w:r></w:p>`,
    )
    .join('');
  const file = docx(body, {
    rels: pictures.map((_, i): [string, string, string] => [`rIdImg${i}`, 'image', `media/p${i}.png`]),
    parts: Object.fromEntries(pictures.map((w, i) => [`word/media/p${i}.png`, png(w)])),
  });

  it('are handed over one at a time after the text, each on its page, none kept', async () => {
    const handed: ExtractedImage[] = [];
    let inFlight = 0;
    let most = 0;
    const doc = await parseDocument('docx', file, DEFAULT_PARSE_LIMITS, {
      onImage: async (image) => {
        most = Math.max(most, ++inFlight);
        await new Promise((done) => setTimeout(done, 5));
        handed.push(image);
        inFlight--;
      },
    });
    expect(most).toBe(1);
    expect(handed.map((image) => [image.width, image.page])).toEqual([
      [100, 1],
      [101, 2],
      [102, 3],
    ]);
    expect(doc.images).toEqual([]);
    expect(doc.blocks.map((b) => [b.text, b.page])).toEqual([
      ['Figure 1', 1],
      ['Figure 2', 2],
      ['Figure 3', 3],
    ]);
  });

  it('are kept in the result for a caller that takes none', () => {
    expect(parseDocx(file).images.map((image) => image.width)).toEqual(pictures);
  });
});

describe('DOCX pages, decided once the body has streamed past', () => {
  it('numbers by rendered breaks even when the first of them comes after an explicit one', () => {
    const p = (text: string, inner = '') => `<w:p><w:r>${inner}<w:t>${text}</w:t></w:r></w:p>`;
    const doc = parseDocx(
      docx(`${p('One')}${p('Two', '<w:br w:type="page"/>')}${p('Three', '<w:lastRenderedPageBreak/>')}${p('Four')}`),
    );
    expect(doc.blocks.map((b) => [b.text, b.page])).toEqual([
      ['One', 1],
      ['Two', 1],
      ['Three', 2],
      ['Four', 2],
    ]);
    expect(doc.pageCount).toBe(2);
  });
});

describe('a wall of text', () => {
  const words = Array.from({ length: 60_000 }, (_, i) => `word${i}${i % 9 === 8 ? '.' : ''}`).join(' ');

  it('is cut into blocks of a bounded size before it is worked on, that read on as one', () => {
    const doc = parseText(utf8(`Title line\n\n${words}`), 'txt');
    expect(doc.blocks.length).toBeGreaterThan(words.length / MAX_BLOCK_CHARS);
    expect(Math.max(...doc.blocks.map((b) => b.text.length))).toBeLessThanOrEqual(MAX_BLOCK_CHARS);
    expect(doc.blocks.slice(2).every((b) => b.continues)).toBe(true);
    expect(doc.blocks[1]!.continues).toBeUndefined();
    // Chunked, the pieces join with a space, as the paragraph given whole does.
    const chunks = chunkBlocks(doc.blocks.slice(1), { chunkSize: 1000, overlap: 0 });
    expect(chunks.map((c) => c.text).join(' ')).toBe(words);
    expect(chunks.every((c) => !c.text.includes('\n'))).toBe(true);
  });

  it('is cut at blanks, or at the limit when there is none, never inside a surrogate pair', () => {
    expect(cutLongText('aaa bbb\nccc', 5)).toEqual(['aaa', 'bbb', 'ccc']);
    expect(cutLongText('abcdefgh', 3)).toEqual(['abc', 'def', 'gh']);
    expect(cutLongText('ab😀cd', 3)).toEqual(['ab', '😀c', 'd']);
  });
});

describe('a page too large for a DOM', () => {
  const filler = Array.from({ length: MAX_DOM_ELEMENTS }, (_, i) => `<p>Item ${i}.</p>`).join('');
  const page = `<!DOCTYPE html><html><head><title>Quarterly report &amp; notes</title><style>p { color: red }</style></head><body>
    <nav><a href="/">Home</a> <a href="/about">About</a></nav>
    <h1>Quarterly report</h1>
    <script>document.write('<p>not text</p>')</script>
    <p>First paragraph with <b>bold</b> and <a href="#">a link</a> &mdash; done.
    <p>Second, unclosed<br>on two lines.
    <div hidden><p>Hidden text</p></div>
    <ul><li>One<li>Two <ul><li>Nested</li></ul></li></ul>
    <table><tr><th>Name</th><th>Value</th></tr><tr><td>Alpha</td><td>1</td></tr><tr><td>Beta</td><td>2</td></tr></table>
    <h2>Details</h2>${filler}
    <footer>Copyright</footer></body></html>`;

  it('is read in one pass, with the structure a DOM reading gives', () => {
    const doc = parseHtml(utf8(page), null, '');
    const texts = doc.blocks.map((b) => `${b.kind}${b.level ?? ''}: ${b.text}`);
    expect(texts.slice(0, 11)).toEqual([
      'heading1: Quarterly report',
      'paragraph: First paragraph with bold and a link — done.',
      'paragraph: Second, unclosed on two lines.',
      'list_item: One',
      'list_item: Two',
      'list_item: Nested',
      'table_row: Name: Alpha; Value: 1',
      'table_row: Name: Beta; Value: 2',
      'heading2: Details',
      'paragraph: Item 0.',
      'paragraph: Item 1.',
    ]);
    expect(doc.blocks).toHaveLength(9 + MAX_DOM_ELEMENTS);
    expect(texts.join('\n')).not.toMatch(/Home|Hidden|not text|color|Copyright/);
  });

  it('keeps its chrome when there is nothing else, and stays linear on deep or broken markup', () => {
    const chromeOnly = `<html><body><nav>${'<a>Link</a> '.repeat(MAX_DOM_ELEMENTS + 1)}</nav></body></html>`;
    expect(parseHtml(utf8(chromeOnly), null, '').blocks[0]?.text).toMatch(/^Link Link/);
    const deep = `<html><body>${'<div>'.repeat(200_000)}Deep text.${'</div>'.repeat(200_000)}<p>After</p></body></html>`;
    const started = performance.now();
    expect(parseHtml(utf8(deep), null, '').blocks.map((b) => b.text)).toEqual(['Deep text.', 'After']);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
