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
  c: 'http://schemas.openxmlformats.org/drawingml/2006/chart',
  dgm: 'http://schemas.openxmlformats.org/drawingml/2006/diagram',
  xdr: 'http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing',
  wp: 'http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing',
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

/**
 * A workbook of the given sheets; a sheet's `tail` follows its sheetData (merged cells, a
 * `<drawing r:id>`), its `rels` are its relationships, and a chart sheet holds only a drawing.
 */
export function xlsx(
  sheets: {
    name: string;
    rows?: string;
    part?: string;
    tail?: string;
    rels?: [string, string, string][];
    chartsheet?: boolean;
  }[],
  extra: { sharedStrings?: string[]; styles?: string; date1904?: boolean; parts?: Record<string, string> } = {},
) {
  const partOf = (s: { part?: string; chartsheet?: boolean }, i: number) =>
    s.part ?? (s.chartsheet ? `chartsheets/sheet${i + 1}.xml` : `worksheets/sheet${i + 1}.xml`);
  const parts: Record<string, string> = {
    'xl/workbook.xml': `<workbook xmlns="${NS.x}" xmlns:r="${NS.r}"><workbookPr${extra.date1904 ? ' date1904="1"' : ''}/><sheets>${sheets
      .map((s, i) => `<sheet name="${s.name}" sheetId="${i + 1}" r:id="rIdS${i}"/>`)
      .join('')}</sheets></workbook>`,
    'xl/_rels/workbook.xml.rels': rels([
      ...sheets.map((s, i): [string, string, string] => [`rIdS${i}`, s.chartsheet ? 'chartsheet' : 'worksheet', partOf(s, i)]),
      ['rIdSS', 'sharedStrings', 'sharedStrings.xml'],
      ['rIdSt', 'styles', 'styles.xml'],
    ]),
    'xl/sharedStrings.xml': `<sst xmlns="${NS.x}">${(extra.sharedStrings ?? []).map((s) => `<si><t>${s}</t></si>`).join('')}</sst>`,
    'xl/styles.xml': extra.styles ?? `<styleSheet xmlns="${NS.x}"><cellXfs><xf numFmtId="0"/></cellXfs></styleSheet>`,
  };
  sheets.forEach((s, i) => {
    const part = partOf(s, i);
    parts[`xl/${part}`] = s.chartsheet
      ? `<chartsheet xmlns="${NS.x}" xmlns:r="${NS.r}"><sheetPr/>${s.tail ?? ''}</chartsheet>`
      : `<worksheet xmlns="${NS.x}" xmlns:r="${NS.r}"><sheetData>${s.rows ?? ''}</sheetData>${s.tail ?? ''}</worksheet>`;
    if (s.rels) {
      const slash = part.lastIndexOf('/');
      parts[`xl/${part.slice(0, slash)}/_rels/${part.slice(slash + 1)}.rels`] = rels(s.rels);
    }
  });
  for (const [name, content] of Object.entries(extra.parts ?? {})) parts[`xl/${name}`] = content;
  return pack('xlsx', 'xl/workbook.xml', parts);
}

// ---------------------------------------------------------------------------------------------
// Charts and SmartArt, as Office writes them: the cached values in the chart part, with the
// formatting, formulas and extensions around them that the parser must pass over.

export interface ChartSeries {
  name?: string;
  categories?: (string | number)[];
  values: number[];
}

export interface ChartSpec {
  /** `barChart`, `lineChart`, `pieChart`, `scatterChart`, ... */
  plot?: string;
  title?: string;
  categoryAxis?: string;
  valueAxis?: string;
  series: ChartSeries[];
  /** Format code of the numeric categories (a date axis: `m/d/yyyy`). */
  categoryFormat?: string;
  valueFormat?: string;
}

const rich = (text: string) =>
  `<c:tx><c:rich><a:bodyPr/><a:lstStyle/><a:p><a:pPr><a:defRPr sz="1400" b="0"/></a:pPr><a:r><a:rPr lang="en-US"/><a:t>${text}</a:t></a:r></a:p></c:rich></c:tx><c:overlay val="0"/>`;

function points(kind: 'str' | 'num', values: (string | number)[], format = 'General'): string {
  const cache = kind === 'str' ? 'strCache' : 'numCache';
  const pts = values.map((v, i) => `<c:pt idx="${i}"><c:v>${v}</c:v></c:pt>`).join('');
  return `<c:${kind}Ref><c:f>Sheet1!$A$2:$A$${values.length + 1}</c:f><c:${cache}>${kind === 'num' ? `<c:formatCode>${format}</c:formatCode>` : ''}<c:ptCount val="${values.length}"/>${pts}</c:${cache}></c:${kind}Ref>`;
}

/** A chart part (`c:chartSpace`) showing `spec`. */
export function chartXml(spec: ChartSpec): string {
  const plot = spec.plot ?? 'barChart';
  const scatter = plot === 'scatterChart' || plot === 'bubbleChart';
  const series = spec.series
    .map((s, i) => {
      const name =
        s.name === undefined
          ? ''
          : `<c:tx><c:strRef><c:f>Sheet1!$${String.fromCharCode(66 + i)}$1</c:f><c:strCache><c:ptCount val="1"/><c:pt idx="0"><c:v>${s.name}</c:v></c:pt></c:strCache></c:strRef></c:tx>`;
      const numeric = s.categories?.every((c) => typeof c === 'number') ?? false;
      const cats = s.categories
        ? `<c:${scatter ? 'xVal' : 'cat'}>${points(numeric ? 'num' : 'str', s.categories, spec.categoryFormat)}</c:${scatter ? 'xVal' : 'cat'}>`
        : '';
      const vals = `<c:${scatter ? 'yVal' : 'val'}>${points('num', s.values, spec.valueFormat)}</c:${scatter ? 'yVal' : 'val'}>`;
      return `<c:ser><c:idx val="${i}"/><c:order val="${i}"/>${name}<c:spPr><a:solidFill><a:schemeClr val="accent${i + 1}"/></a:solidFill></c:spPr><c:invertIfNegative val="0"/>${cats}${vals}<c:extLst><c:ext uri="{C3380CC4-5D6E-409C-BE32-E72D297353CC}"><c16:uniqueId xmlns:c16="http://schemas.microsoft.com/office/drawing/2014/chart" val="{0000000${i}}"/></c:ext></c:extLst></c:ser>`;
    })
    .join('');
  const axis = (tag: string, id: number, cross: number, title?: string) =>
    `<c:${tag}><c:axId val="${id}"/><c:scaling><c:orientation val="minMax"/></c:scaling><c:delete val="0"/><c:axPos val="${tag === 'valAx' ? 'l' : 'b'}"/>${title ? `<c:title>${rich(title)}</c:title>` : ''}<c:numFmt formatCode="General" sourceLinked="1"/><c:crossAx val="${cross}"/></c:${tag}>`;
  const axes =
    plot === 'pieChart' || plot === 'doughnutChart'
      ? ''
      : `<c:axId val="1"/><c:axId val="2"/></c:${plot}>${axis(scatter ? 'valAx' : 'catAx', 1, 2, spec.categoryAxis)}${axis('valAx', 2, 1, spec.valueAxis)}`;
  const close = axes === '' ? `</c:${plot}>` : '';
  return (
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<c:chartSpace xmlns:c="${NS.c}" xmlns:a="${NS.a}" xmlns:r="${NS.r}" xmlns:mc="${NS.mc}">` +
    `<c:date1904 val="0"/><c:lang val="en-US"/><mc:AlternateContent><mc:Choice Requires="c14" xmlns:c14="http://schemas.microsoft.com/office/drawing/2007/8/2/chart"><c14:style val="102"/></mc:Choice><mc:Fallback><c:style val="2"/></mc:Fallback></mc:AlternateContent>` +
    `<c:chart>${spec.title ? `<c:title>${rich(spec.title)}</c:title>` : ''}<c:autoTitleDeleted val="${spec.title ? 0 : 1}"/><c:plotArea><c:layout/>` +
    `<c:${plot}>${plot === 'barChart' ? '<c:barDir val="col"/><c:grouping val="clustered"/>' : ''}<c:varyColors val="0"/>${series}` +
    `<c:dLbls><c:showLegendKey val="0"/><c:showVal val="0"/></c:dLbls>${axes}${close}` +
    `</c:plotArea><c:legend><c:legendPos val="r"/></c:legend><c:plotVisOnly val="1"/></c:chart>` +
    `<c:txPr><a:bodyPr/><a:p><a:pPr><a:defRPr/></a:pPr><a:endParaRPr lang="en-US"/></a:p></c:txPr>` +
    `<c:externalData r:id="rId1"><c:autoUpdate val="0"/></c:externalData></c:chartSpace>`
  );
}

/** A SmartArt data part whose boxes say `nodes` (with the document, connection and layout points Office adds). */
export function smartArtData(nodes: string[]): string {
  const pts = nodes
    .map(
      (text, i) =>
        `<dgm:pt modelId="{N${i}}"><dgm:prSet phldrT="[Text]"/><dgm:spPr/><dgm:t><a:bodyPr/><a:lstStyle/><a:p><a:r><a:rPr lang="en-US"/><a:t>${text}</a:t></a:r></a:p></dgm:t></dgm:pt>` +
        `<dgm:pt modelId="{P${i}}" type="parTrans" cxnId="{C${i}}"><dgm:prSet/><dgm:spPr/><dgm:t><a:bodyPr/><a:lstStyle/><a:p><a:endParaRPr lang="en-US"/></a:p></dgm:t></dgm:pt>` +
        `<dgm:pt modelId="{S${i}}" type="pres"><dgm:prSet presName="node" presStyleLbl="node1"/><dgm:spPr/></dgm:pt>`,
    )
    .join('');
  return `<dgm:dataModel xmlns:dgm="${NS.dgm}" xmlns:a="${NS.a}"><dgm:ptLst><dgm:pt modelId="{DOC}" type="doc"><dgm:prSet loTypeId="urn:microsoft.com/office/officeart/2005/8/layout/process1"/><dgm:spPr/><dgm:t><a:bodyPr/><a:lstStyle/><a:p><a:endParaRPr lang="en-US"/></a:p></dgm:t></dgm:pt>${pts}</dgm:ptLst><dgm:cxnLst/><dgm:bg/><dgm:whole/></dgm:dataModel>`;
}

const GRAPHIC_URI = { chart: NS.c, smartart: NS.dgm };

/** The `a:graphic` a frame holds for a chart or a SmartArt diagram whose data part is `rId`. */
export function graphic(kind: 'chart' | 'smartart', rId: string): string {
  const inner =
    kind === 'chart'
      ? `<c:chart xmlns:c="${NS.c}" r:id="${rId}"/>`
      : `<dgm:relIds xmlns:dgm="${NS.dgm}" r:dm="${rId}" r:lo="${rId}lo" r:qs="${rId}qs" r:cs="${rId}cs"/>`;
  return `<a:graphic xmlns:a="${NS.a}"><a:graphicData uri="${GRAPHIC_URI[kind]}">${inner}</a:graphicData></a:graphic>`;
}

export interface SlideSpec {
  title?: string;
  /** More of the shape tree: text shapes, `slideGraphic(...)` frames. */
  shapes?: string;
  /** The slide's relationships besides its notes. */
  rels?: [string, string, string][];
  notes?: string;
}

/** A slide's frame holding a chart or SmartArt. */
export function slideGraphic(kind: 'chart' | 'smartart', rId: string, id = 4): string {
  return `<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="${id}" name="${kind} ${id}"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="0" y="0"/><a:ext cx="8000000" cy="5000000"/></p:xfrm>${graphic(kind, rId)}</p:graphicFrame>`;
}

/** A presentation of the given slides; `parts` adds charts, diagrams and media under `ppt/`. */
export function pptx(slides: SlideSpec[], parts: Record<string, string | Uint8Array> = {}): Uint8Array {
  const files: Record<string, string | Uint8Array> = {
    'ppt/presentation.xml': `<p:presentation xmlns:p="${NS.p}" xmlns:r="${NS.r}"><p:sldIdLst>${slides.map((_, i) => `<p:sldId id="${256 + i}" r:id="rIdSl${i}"/>`).join('')}</p:sldIdLst></p:presentation>`,
    'ppt/_rels/presentation.xml.rels': rels(slides.map((_, i) => [`rIdSl${i}`, 'slide', `slides/slide${i + 1}.xml`])),
  };
  slides.forEach((slide, i) => {
    const title = slide.title
      ? `<p:sp><p:nvSpPr><p:cNvPr id="2" name="Title"/><p:cNvSpPr/><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>${slide.title}</a:t></a:r></a:p></p:txBody></p:sp>`
      : '';
    files[`ppt/slides/slide${i + 1}.xml`] =
      `<p:sld xmlns:p="${NS.p}" xmlns:a="${NS.a}" xmlns:r="${NS.r}"><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>${title}${slide.shapes ?? ''}</p:spTree></p:cSld></p:sld>`;
    const slideRels = [...(slide.rels ?? [])];
    if (slide.notes !== undefined) {
      slideRels.push(['rIdNotes', 'notesSlide', `../notesSlides/notesSlide${i + 1}.xml`]);
      files[`ppt/notesSlides/notesSlide${i + 1}.xml`] =
        `<p:notes xmlns:p="${NS.p}" xmlns:a="${NS.a}"><p:cSld><p:spTree><p:sp><p:nvSpPr><p:cNvPr id="2" name="Notes"/><p:cNvSpPr/><p:nvPr><p:ph type="body" idx="1"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>${slide.notes}</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:notes>`;
    }
    if (slideRels.length > 0) files[`ppt/slides/_rels/slide${i + 1}.xml.rels`] = rels(slideRels);
  });
  for (const [name, content] of Object.entries(parts)) files[`ppt/${name}`] = content;
  return pack('pptx', 'ppt/presentation.xml', files);
}

/** A run holding a chart or SmartArt, for a Word paragraph. */
export function docxGraphic(kind: 'chart' | 'smartart', rId: string): string {
  return `<w:r><w:drawing><wp:inline xmlns:wp="${NS.wp}"><wp:extent cx="5486400" cy="3200400"/><wp:docPr id="1" name="${kind}"/>${graphic(kind, rId)}</wp:inline></w:drawing></w:r>`;
}

/** A sheet's drawing part placing the given charts and diagrams (relationship ids of the drawing). */
export function sheetDrawing(frames: { kind: 'chart' | 'smartart'; rId: string }[]): string {
  return `<xdr:wsDr xmlns:xdr="${NS.xdr}" xmlns:a="${NS.a}" xmlns:r="${NS.r}">${frames
    .map(
      (f, i) =>
        `<xdr:twoCellAnchor><xdr:from><xdr:col>${i * 8}</xdr:col><xdr:row>1</xdr:row></xdr:from><xdr:to><xdr:col>${i * 8 + 7}</xdr:col><xdr:row>15</xdr:row></xdr:to><xdr:graphicFrame macro=""><xdr:nvGraphicFramePr><xdr:cNvPr id="${i + 2}" name="Chart ${i + 1}"/><xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr><xdr:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/></xdr:xfrm>${graphic(f.kind, f.rId)}</xdr:graphicFrame><xdr:clientData/></xdr:twoCellAnchor>`,
    )
    .join('')}</xdr:wsDr>`;
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
