/**
 * Office packages built in memory for the parser tests and the hostile-file benchmark: the
 * content types, the package relationship, and whatever parts a test gives.
 */
import { strToU8, type Zippable, zipSync } from 'fflate';

export const NS = {
  w: 'http://schemas.openxmlformats.org/wordprocessingml/2006/main',
  r: 'http://schemas.openxmlformats.org/officeDocument/2006/relationships',
  a: 'http://schemas.openxmlformats.org/drawingml/2006/main',
  p: 'http://schemas.openxmlformats.org/presentationml/2006/main',
  x: 'http://schemas.openxmlformats.org/spreadsheetml/2006/main',
  rel: 'http://schemas.openxmlformats.org/package/2006/relationships',
  mc: 'http://schemas.openxmlformats.org/markup-compatibility/2006',
};
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const MAIN_TYPE = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml',
};

export function rels(list: [id: string, type: string, target: string][]): string {
  return `<Relationships xmlns="${NS.rel}">${list.map(([id, type, target]) => `<Relationship Id="${id}" Type="${REL}/${type}" Target="${target}"/>`).join('')}</Relationships>`;
}

/** A minimal Office package: content types, the package relationship, and the given parts. */
export function pack(kind: keyof typeof MAIN_TYPE, main: string, parts: Record<string, string | Uint8Array>): Uint8Array {
  const files: Zippable = {
    '[Content_Types].xml': strToU8(
      `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/${main}" ContentType="${MAIN_TYPE[kind]}"/></Types>`,
    ),
    '_rels/.rels': strToU8(rels([['rId1', 'officeDocument', main]])),
  };
  for (const [name, content] of Object.entries(parts)) files[name] = typeof content === 'string' ? strToU8(content) : content;
  return zipSync(files);
}

const STYLES = `<w:styles xmlns:w="${NS.w}">
  <w:docDefaults><w:rPrDefault><w:rPr><w:sz w:val="22"/></w:rPr></w:rPrDefault></w:docDefaults>
  <w:style w:type="paragraph" w:default="1" w:styleId="Standard"><w:name w:val="Normal"/></w:style>
  <w:style w:type="paragraph" w:styleId="Titel"><w:name w:val="Title"/></w:style>
  <w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/><w:basedOn w:val="Standard"/></w:style>
  <w:style w:type="paragraph" w:styleId="berschrift2"><w:name w:val="heading 2"/></w:style>
  <w:style w:type="paragraph" w:styleId="MyChapter"><w:name w:val="My Chapter"/><w:basedOn w:val="berschrift2"/></w:style>
  <w:style w:type="paragraph" w:styleId="Aufzhlung"><w:name w:val="List Bullet"/></w:style>
</w:styles>`;

/** A Word document whose body is `body`, with a styles part (Normal, Title, headings, List Bullet). */
export function docx(
  body: string,
  extra: { parts?: Record<string, string | Uint8Array>; rels?: [string, string, string][]; prolog?: string } = {},
) {
  return pack('docx', 'word/document.xml', {
    'word/document.xml': `<?xml version="1.0" encoding="UTF-8"?>${extra.prolog ?? ''}<w:document xmlns:w="${NS.w}" xmlns:r="${NS.r}" xmlns:mc="${NS.mc}"><w:body>${body}</w:body></w:document>`,
    'word/_rels/document.xml.rels': rels([['rIdStyles', 'styles', 'styles.xml'], ...(extra.rels ?? [])]),
    'word/styles.xml': STYLES,
    ...extra.parts,
  });
}

/** A workbook of the given sheets; a sheet's `tail` follows its sheetData (merged cells, say). */
export function xlsx(
  sheets: { name: string; rows: string; part?: string; tail?: string }[],
  extra: { sharedStrings?: string[]; styles?: string; date1904?: boolean } = {},
) {
  const parts: Record<string, string> = {
    'xl/workbook.xml': `<workbook xmlns="${NS.x}" xmlns:r="${NS.r}"><workbookPr${extra.date1904 ? ' date1904="1"' : ''}/><sheets>${sheets
      .map((s, i) => `<sheet name="${s.name}" sheetId="${i + 1}" r:id="rIdS${i}"/>`)
      .join('')}</sheets></workbook>`,
    'xl/_rels/workbook.xml.rels': rels([
      ...sheets.map((s, i): [string, string, string] => [`rIdS${i}`, 'worksheet', s.part ?? `worksheets/sheet${i + 1}.xml`]),
      ['rIdSS', 'sharedStrings', 'sharedStrings.xml'],
      ['rIdSt', 'styles', 'styles.xml'],
    ]),
    'xl/sharedStrings.xml': `<sst xmlns="${NS.x}">${(extra.sharedStrings ?? []).map((s) => `<si><t>${s}</t></si>`).join('')}</sst>`,
    'xl/styles.xml': extra.styles ?? `<styleSheet xmlns="${NS.x}"><cellXfs><xf numFmtId="0"/></cellXfs></styleSheet>`,
  };
  sheets.forEach((s, i) => {
    parts[`xl/${s.part ?? `worksheets/sheet${i + 1}.xml`}`] =
      `<worksheet xmlns="${NS.x}"><sheetData>${s.rows}</sheetData>${s.tail ?? ''}</worksheet>`;
  });
  return pack('xlsx', 'xl/workbook.xml', parts);
}

export interface RawEntry {
  name: string;
  /** The entry's bytes as stored (already compressed for method 8). */
  data: Uint8Array;
  method: 0 | 8;
  /** Declared uncompressed size. */
  size: number;
  crc?: number;
  flags?: number;
}

/**
 * The fields a local header and its central directory record share, in the same order from `at`
 * (the central record has "version made by" first, so its copy starts two bytes later).
 */
function writeSharedFields(view: DataView, at: number, e: RawEntry, nameLength: number) {
  view.setUint16(at, 20, true);
  view.setUint16(at + 2, e.flags ?? 0, true);
  view.setUint16(at + 4, e.method, true);
  view.setUint32(at + 10, e.crc ?? 0, true);
  view.setUint32(at + 14, e.data.length, true);
  view.setUint32(at + 18, e.size, true);
  view.setUint16(at + 22, nameLength, true);
}

/** Writes a ZIP byte by byte, so that tests can make its headers say anything. */
export function rawZip(entries: RawEntry[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = strToU8(e.name);
    const local = new Uint8Array(30 + name.length);
    const lv = new DataView(local.buffer);
    lv.setUint32(0, 0x04034b50, true);
    writeSharedFields(lv, 4, e, name.length);
    local.set(name, 30);
    const cd = new Uint8Array(46 + name.length);
    const cv = new DataView(cd.buffer);
    cv.setUint32(0, 0x02014b50, true);
    cv.setUint16(4, 20, true);
    writeSharedFields(cv, 6, e, name.length);
    cv.setUint32(42, offset, true);
    cd.set(name, 46);
    parts.push(local, e.data);
    central.push(cd);
    offset += local.length + e.data.length;
  }
  const cdSize = central.reduce((n, c) => n + c.length, 0);
  const end = new Uint8Array(22);
  const ev = new DataView(end.buffer);
  ev.setUint32(0, 0x06054b50, true);
  ev.setUint16(8, entries.length, true);
  ev.setUint16(10, entries.length, true);
  ev.setUint32(12, cdSize, true);
  ev.setUint32(16, offset, true);
  return new Uint8Array(Buffer.concat([...parts, ...central, end]));
}
