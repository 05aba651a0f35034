import { describe, expect, it } from 'vitest';
import { csvRecords, detectDelimiter, MAX_CSV_CELLS, parseCsv } from '../../../workers/ingest/src/parsers/csv.ts';
import { fixture } from '../../support/documents.ts';
import { failure, utf8 } from '../../support/parsing.ts';

const STANLEY = [
  { kind: 'heading', text: 'Stanley Cups', level: 1 },
  { kind: 'table_row', text: 'Team: Blues; Location: STL; Stanley Cups: 1' },
  { kind: 'table_row', text: 'Team: Flyers; Location: PHI; Stanley Cups: 2' },
  { kind: 'table_row', text: 'Team: Maple Leafs; Location: TOR; Stanley Cups: 13' },
];

function utf16be(text: string): Uint8Array {
  const le = Buffer.from(text, 'utf16le');
  for (let i = 0; i + 1 < le.length; i += 2) [le[i], le[i + 1]] = [le[i + 1]!, le[i]!];
  return new Uint8Array(le);
}

describe('parseCsv', () => {
  it('reads the Stanley Cups fixture: a title row, then a header', () => {
    const doc = parseCsv(fixture('stanley-cups.csv'));
    expect(doc.blocks).toEqual(STANLEY);
    expect(doc.warnings).toEqual([]);
  });

  it('detects the semicolon delimiter even with commas inside fields', () => {
    const text = new TextDecoder().decode(fixture('semicolon-delimited.csv'));
    expect(detectDelimiter(text)).toBe(';');
    const rows = parseCsv(fixture('semicolon-delimited.csv')).blocks.map((b) => b.text);
    expect(rows[0]).toBe('Lorem, ipsum: consectetur; dolor sit: adipiscing; amet: elit');
    expect(rows).toHaveLength(4);
  });

  it.each([
    ['tab', 'a\tb\tc\n1\t2,5\t3\n4\t5\t6\n', '\t'],
    ['pipe', 'a|b\n1|2\n3|4\n', '|'],
    ['comma with quoted semicolons', 'a,b\n"x;y;z",2\n"p;q",3\n', ','],
    ['single column', 'name\nAnn\nBob\n', ','],
  ])('detects the %s delimiter', (_what, text, delimiter) => {
    expect(detectDelimiter(text)).toBe(delimiter);
  });

  it('reads UTF-16 LE and BE with a BOM, and LE without one', () => {
    const text = new TextDecoder().decode(fixture('stanley-cups.csv'));
    const le = new Uint8Array([0xff, 0xfe, ...Buffer.from(text, 'utf16le')]);
    const be = new Uint8Array([0xfe, 0xff, ...utf16be(text)]);
    expect(parseCsv(le).blocks).toEqual(STANLEY);
    expect(parseCsv(be).blocks).toEqual(STANLEY);
    expect(parseCsv(new Uint8Array(Buffer.from(text, 'utf16le'))).blocks).toEqual(STANLEY);
  });

  it('reads UTF-8 with a BOM and legacy windows-1252', () => {
    expect(parseCsv(utf8('\uFEFFcity,price\nMálaga,5 €\n')).blocks).toEqual([
      { kind: 'table_row', text: 'city: Málaga; price: 5 €' },
    ]);
    const cp1252 = new Uint8Array(Buffer.from('city;note\nZürich;naïve\n', 'latin1'));
    cp1252[cp1252.length - 1] = 0x80; // "€" in windows-1252 replaces the final newline
    expect(parseCsv(cp1252).blocks).toEqual([{ kind: 'table_row', text: 'city: Zürich; note: naïve€' }]);
  });

  it('follows RFC 4180 quoting', () => {
    const records = [...csvRecords('a,"b ""quoted"", and, commas","multi\r\nline"\r\nx,,\n', ',')];
    expect(records).toEqual([
      ['a', 'b "quoted", and, commas', 'multi\r\nline'],
      ['x', '', ''],
    ]);
    expect([...csvRecords('"unterminated,field\nnext', ',')]).toEqual([['unterminated,field\nnext']]);
    expect([...csvRecords('a,b\n\n"c"d,e', ',')]).toEqual([['a', 'b'], [''], ['cd', 'e']]);
  });

  it('skips empty rows and rows that repeat the header', () => {
    const doc = parseCsv(utf8('id,name\n1,Ann\n,\nid,name\n2,Bob\n'));
    expect(doc.blocks.map((b) => b.text)).toEqual(['id: 1; name: Ann', 'id: 2; name: Bob']);
  });

  it('keeps a lone note below a table as a paragraph, and a one-column table as rows', () => {
    const doc = parseCsv(utf8('Team,Cups\nBlues,1\n\nSource: NHL records\n'));
    expect(doc.blocks).toEqual([
      { kind: 'table_row', text: 'Team: Blues; Cups: 1' },
      { kind: 'paragraph', text: 'Source: NHL records' },
    ]);
    expect(parseCsv(utf8('Name\nAnn\nBob\n')).blocks.map((b) => b.text)).toEqual(['Name: Ann', 'Name: Bob']);
    // A header alone is still content.
    expect(parseCsv(utf8('only,a,header\n')).blocks).toEqual([{ kind: 'table_row', text: 'only; a; header' }]);
  });

  it('caps the cells read, with a warning', () => {
    const rows = Array.from({ length: MAX_CSV_CELLS / 2 + 10 }, (_, i) => `r${i},${i}`).join('\n');
    const doc = parseCsv(utf8(`key,value\n${rows}`));
    expect(doc.warnings).toEqual([`The file has more than ${MAX_CSV_CELLS} cells; only the first ${MAX_CSV_CELLS} were read`]);
    expect(doc.blocks.length).toBe(MAX_CSV_CELLS / 2 - 1);
  });

  it('refuses binary data and empty files', () => {
    expect(failure(() => parseCsv(fixture('password-protected.xlsx')))).toMatchObject({
      reason: 'corrupt',
      message: 'The file is not valid text',
    });
    expect(failure(() => parseCsv(crypto.getRandomValues(new Uint8Array(2048)))).reason).toBe('corrupt');
    expect(failure(() => parseCsv(utf8(' \n\t\n'))).reason).toBe('empty');
    expect(failure(() => parseCsv(utf8(',,\n,,\n'))).reason).toBe('empty');
  });
});
