import { describe, expect, it } from 'vitest';
import { charsWarning, ParseBudget } from '../../../workers/ingest/src/parsers/budget.ts';
import { CHART_CUT_WARNING, MAX_CHART_POINTS, readChart } from '../../../workers/ingest/src/parsers/chart.ts';
import { parseDocx } from '../../../workers/ingest/src/parsers/docx.ts';
import { parseDocument } from '../../../workers/ingest/src/parsers/index.ts';
import { parsePptx } from '../../../workers/ingest/src/parsers/pptx.ts';
import { DEFAULT_PARSE_LIMITS, type ParsedDocument } from '../../../workers/ingest/src/parsers/types.ts';
import { parseXlsx } from '../../../workers/ingest/src/parsers/xlsx.ts';
import {
  type ChartSpec,
  chartXml,
  docx,
  docxGraphic,
  NS,
  pptx,
  rels,
  sheetDrawing,
  slideGraphic,
  smartArtData,
  xlsx,
} from '../../support/ooxml-files.ts';
import { failure } from '../../support/parsing.ts';

const REVENUE: ChartSpec = {
  title: 'Quarterly revenue',
  categoryAxis: 'Quarter',
  valueAxis: 'Revenue (USD m)',
  series: [
    { name: 'North', categories: ['Q1', 'Q2', 'Q3'], values: [10, 12.5, 0.30000000000000004] },
    { name: 'South', categories: ['Q1', 'Q2', 'Q3'], values: [7, 9, 11] },
  ],
};

/** A deck of one chart per slide, nothing else on it. */
const chartDeck = (...charts: ChartSpec[]) =>
  pptx(
    charts.map((_, i) => ({ shapes: slideGraphic('chart', 'rIdC'), rels: [['rIdC', 'chart', `../charts/chart${i + 1}.xml`]] })),
    Object.fromEntries(charts.map((c, i) => [`charts/chart${i + 1}.xml`, chartXml(c)])),
  );

const texts = (doc: ParsedDocument) => doc.blocks.map((b) => b.text);

describe('charts in a presentation', () => {
  it('make a deck of charts only a document: title, axes, series, and a row per category on its slide', async () => {
    const trend: ChartSpec = {
      plot: 'lineChart',
      title: 'Churn by month',
      series: [{ name: 'Churn', categories: [45292, 45323], values: [0.042, 0.0375] }],
      categoryFormat: 'm/d/yyyy',
      valueFormat: '0.0%',
    };
    const file = chartDeck(REVENUE, trend);
    const doc = await parseDocument('pptx', file);
    expect(doc.pageCount).toBe(2);
    expect(doc.warnings).toEqual([]);
    expect(doc.blocks).toEqual([
      // A slide without a title of its own is named by its chart.
      { kind: 'heading', text: 'Quarterly revenue', level: 1, page: 1 },
      {
        kind: 'paragraph',
        text: 'Chart: Quarterly revenue. Bar chart. Axes: Quarter; Revenue (USD m). Series: North; South.',
        page: 1,
      },
      { kind: 'table_row', text: 'Quarter: Q1; North: 10; South: 7', page: 1 },
      { kind: 'table_row', text: 'Quarter: Q2; North: 12.5; South: 9', page: 1 },
      // Cached doubles read as Excel shows them.
      { kind: 'table_row', text: 'Quarter: Q3; North: 0.3; South: 11', page: 1 },
      { kind: 'heading', text: 'Churn by month', level: 1, page: 2 },
      { kind: 'paragraph', text: 'Chart: Churn by month. Line chart. Series: Churn.', page: 2 },
      // Date categories and percentage values in their number formats.
      { kind: 'table_row', text: 'Category: 2024-01-01; Churn: 4.2%', page: 2 },
      { kind: 'table_row', text: 'Category: 2024-02-01; Churn: 3.75%', page: 2 },
    ]);
  });

  it('read pie, scatter and untitled charts, each series against its own x values', () => {
    const pie: ChartSpec = { plot: 'pieChart', series: [{ name: 'Share', categories: ['Oak', 'Ash'], values: [60, 40] }] };
    const scatter: ChartSpec = {
      plot: 'scatterChart',
      title: 'Height against age',
      categoryAxis: 'Age',
      valueAxis: 'Height',
      series: [
        { name: 'Oaks', categories: [1, 2], values: [0.5, 1.1] },
        { name: 'Ashes', categories: [3], values: [2] },
      ],
    };
    const unnamed: ChartSpec = { plot: 'areaChart', series: [{ values: [5, 6] }] };
    const doc = parsePptx(chartDeck(pie, scatter, unnamed));
    expect(texts(doc)).toEqual([
      'Chart. Pie chart. Series: Share.',
      'Category: Oak; Share: 60',
      'Category: Ash; Share: 40',
      'Height against age',
      'Chart: Height against age. Scatter chart. Axes: Age; Height. Series: Oaks; Ashes.',
      'Age: 1; Oaks: 0.5',
      'Age: 2; Oaks: 1.1',
      'Age: 3; Ashes: 2',
      // No categories: the points are numbered, the series named by its place.
      'Chart. Area chart. Series: Series 1.',
      'Category: 1; Series 1: 5',
      'Category: 2; Series 1: 6',
    ]);
    expect(doc.blocks.map((b) => b.page)).toEqual([1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3]);
  });

  it('sit with the slide text, SmartArt boxes and speaker notes (a block of their own) of their slide', () => {
    const file = pptx(
      [
        {
          title: 'Results',
          shapes: slideGraphic('chart', 'rIdC', 5) + slideGraphic('smartart', 'rIdD', 6),
          rels: [
            ['rIdC', 'chart', '../charts/chart1.xml'],
            ['rIdD', 'diagramData', '../diagrams/data1.xml'],
          ],
          notes: 'Mention the dip in Q3',
        },
      ],
      {
        'charts/chart1.xml': chartXml({ series: [{ name: 'Units', categories: ['Q3'], values: [4] }] }),
        'diagrams/data1.xml': smartArtData(['Plan', 'Build', 'Ship']),
      },
    );
    expect(parsePptx(file).blocks).toEqual([
      { kind: 'heading', text: 'Results', level: 1, page: 1 },
      { kind: 'paragraph', text: 'Chart. Bar chart. Series: Units.', page: 1 },
      { kind: 'table_row', text: 'Category: Q3; Units: 4', page: 1 },
      // Only the boxes' text: not the document, connection or layout points of the data model.
      { kind: 'list_item', text: 'Plan', page: 1 },
      { kind: 'list_item', text: 'Build', page: 1 },
      { kind: 'list_item', text: 'Ship', page: 1 },
      { kind: 'paragraph', text: 'Speaker notes: Mention the dip in Q3', page: 1 },
    ]);
  });

  it(`reads at most ${MAX_CHART_POINTS} points a series, with a warning`, () => {
    const values = Array.from({ length: 1_500 }, (_, i) => i);
    const doc = parsePptx(chartDeck({ series: [{ name: 'Long', categories: values.map((v) => `P${v}`), values }] }));
    const rows = doc.blocks.filter((b) => b.kind === 'table_row');
    expect(rows).toHaveLength(MAX_CHART_POINTS);
    expect(rows.at(-1)?.text).toBe(`Category: P${MAX_CHART_POINTS - 1}; Long: ${MAX_CHART_POINTS - 1}`);
    expect(doc.warnings).toEqual([CHART_CUT_WARNING]);
  });

  it("count against the document's character budget", () => {
    const values = Array.from({ length: 200 }, (_, i) => i);
    const file = chartDeck({ series: [{ name: 'Budgeted', categories: values.map((v) => `Point ${v}`), values }] });
    const whole = parsePptx(file);
    const chars = whole.blocks.reduce((n, b) => n + b.text.length, 0);
    const cut = parsePptx(file, { ...DEFAULT_PARSE_LIMITS, maxChars: Math.floor(chars / 2) });
    expect(cut.truncated).toBe(true);
    expect(cut.warnings).toEqual([charsWarning(Math.floor(chars / 2))]);
    expect(cut.blocks.length).toBeGreaterThan(1);
    expect(cut.blocks.length).toBeLessThan(whole.blocks.length);
    expect(cut.blocks.reduce((n, b) => n + b.text.length, 0)).toBeLessThanOrEqual(Math.floor(chars / 2));
  });

  it('lose only the chart when its part is missing or broken, and refuse a DTD in it', () => {
    const deck = (chart: string | null) =>
      pptx(
        [{ title: 'Kept', shapes: slideGraphic('chart', 'rIdC'), rels: [['rIdC', 'chart', '../charts/chart1.xml']] }],
        chart === null ? {} : { 'charts/chart1.xml': chart },
      );
    const missing = parsePptx(deck(null));
    expect(texts(missing)).toEqual(['Kept']);
    expect(missing.warnings).toEqual(['A chart is missing from the file']);
    const broken = parsePptx(deck(`<c:chartSpace xmlns:c="${NS.c}"><c:chart><c:title>`));
    expect(texts(broken)).toEqual(['Kept']);
    expect(broken.warnings).toEqual(['A chart could not be read']);
    const dtd = deck(`<!DOCTYPE c [<!ENTITY x "y">]><c:chartSpace xmlns:c="${NS.c}"/>`);
    expect(failure(() => parsePptx(dtd)).reason).toBe('unsafe');
  });

  it('reads one level of multi-level categories, and takes one branch of alternate content', () => {
    const xml = `<c:chartSpace xmlns:c="${NS.c}" xmlns:mc="${NS.mc}"><c:chart><c:plotArea><c:barChart>
      <c:ser><c:idx val="0"/><c:tx><c:v>Direct name</c:v></c:tx>
        <c:cat><c:multiLvlStrRef><c:multiLvlStrCache><c:ptCount val="2"/>
          <c:lvl><c:pt idx="0"><c:v>Jan</c:v></c:pt><c:pt idx="1"><c:v>Feb</c:v></c:pt></c:lvl>
          <c:lvl><c:pt idx="0"><c:v>2024</c:v></c:pt></c:lvl>
        </c:multiLvlStrCache></c:multiLvlStrRef></c:cat>
        <c:val><c:numLit><c:formatCode>General</c:formatCode><c:pt idx="0"><c:v>1</c:v></c:pt><c:pt idx="1"><c:v>2</c:v></c:pt></c:numLit></c:val>
        <c:dLbls><c:dLbl><c:idx val="0"/><c:tx><c:rich><a:p xmlns:a="${NS.a}"><a:r><a:t>label text</a:t></a:r></a:p></c:rich></c:tx></c:dLbl></c:dLbls>
      </c:ser>
      <mc:AlternateContent><mc:Choice Requires="c14"><c:ser><c:idx val="1"/><c:tx><c:v>Chosen</c:v></c:tx><c:val><c:numLit><c:pt idx="0"><c:v>3</c:v></c:pt></c:numLit></c:val></c:ser></mc:Choice>
        <mc:Fallback><c:ser><c:idx val="1"/><c:tx><c:v>Fallback</c:v></c:tx><c:val><c:numLit><c:pt idx="0"><c:v>3</c:v></c:pt></c:numLit></c:val></c:ser></mc:Fallback></mc:AlternateContent>
    </c:barChart></c:plotArea></c:chart></c:chartSpace>`;
    const chart = readChart(xml, new ParseBudget(DEFAULT_PARSE_LIMITS));
    expect(chart.series.map((s) => [s.name, [...s.categories], [...s.values]])).toEqual([
      ['Direct name', ['Jan', 'Feb'], ['1', '2']],
      ['Chosen', [], ['3']],
    ]);
  });
});

describe('charts, SmartArt and text boxes in a Word document', () => {
  const p = (text: string) => `<w:p><w:r><w:t>${text}</w:t></w:r></w:p>`;
  const parts = {
    'word/charts/chart1.xml': chartXml(REVENUE),
    'word/diagrams/data1.xml': smartArtData(['Collect', 'Review']),
  };
  const graphicRels: [string, string, string][] = [
    ['rIdC', 'chart', 'charts/chart1.xml'],
    ['rIdD', 'diagramData', 'diagrams/data1.xml'],
  ];

  it('follow the paragraph holding them, on its page', () => {
    const body =
      p('First page') +
      `<w:p><w:r><w:br w:type="page"/></w:r>${docxGraphic('chart', 'rIdC')}<w:r><w:t>Figure 1</w:t></w:r></w:p>` +
      `<w:p>${docxGraphic('smartart', 'rIdD')}</w:p>`;
    const doc = parseDocx(docx(body, { parts, rels: graphicRels }));
    expect(doc.blocks).toEqual([
      { kind: 'paragraph', text: 'First page', page: 1 },
      { kind: 'paragraph', text: 'Figure 1', page: 2 },
      {
        kind: 'paragraph',
        text: 'Chart: Quarterly revenue. Bar chart. Axes: Quarter; Revenue (USD m). Series: North; South.',
        page: 2,
      },
      { kind: 'table_row', text: 'Quarter: Q1; North: 10; South: 7', page: 2 },
      { kind: 'table_row', text: 'Quarter: Q2; North: 12.5; South: 9', page: 2 },
      { kind: 'table_row', text: 'Quarter: Q3; North: 0.3; South: 11', page: 2 },
      { kind: 'list_item', text: 'Collect', page: 2 },
      { kind: 'list_item', text: 'Review', page: 2 },
    ]);
  });

  it('in a table cell follow the table; a text box in a cell is read once, in its cell', () => {
    const box = (text: string) =>
      `<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wps:txbx xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><w:txbxContent>${p(text)}</w:txbxContent></wps:txbx></w:drawing></mc:Choice><mc:Fallback><w:pict><v:textbox xmlns:v="urn:schemas-microsoft-com:vml"><w:txbxContent>${p(text)}</w:txbxContent></v:textbox></w:pict></mc:Fallback></mc:AlternateContent></w:r>`;
    const cell = (content: string) => `<w:tc>${content}</w:tc>`;
    const body =
      `<w:tbl><w:tr>${cell(p('Name'))}${cell(p('Figure'))}</w:tr>` +
      `<w:tr>${cell(`<w:p><w:r><w:t>Revenue</w:t></w:r>${box('boxed note')}</w:p>`)}${cell(`<w:p>${docxGraphic('chart', 'rIdC')}</w:p>`)}</w:tr></w:tbl>` +
      `<w:p>${box('Loose box')}</w:p>`;
    const doc = parseDocx(docx(body, { parts, rels: graphicRels }));
    expect(texts(doc)).toEqual([
      'Name: Revenue boxed note',
      'Chart: Quarterly revenue. Bar chart. Axes: Quarter; Revenue (USD m). Series: North; South.',
      'Quarter: Q1; North: 10; South: 7',
      'Quarter: Q2; North: 12.5; South: 9',
      'Quarter: Q3; North: 0.3; South: 11',
      'Loose box',
    ]);
  });
});

describe('charts in a workbook', () => {
  it('follow the rows of the sheet they are drawn on, and fill a chart sheet', () => {
    const file = xlsx(
      [
        {
          name: 'Data',
          rows: '<row r="1"><c r="A1" t="inlineStr"><is><t>Quarter</t></is></c><c r="B1" t="inlineStr"><is><t>North</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>Q1</t></is></c><c r="B2"><v>10</v></c></row>',
          tail: '<drawing r:id="rIdDr"/>',
          rels: [['rIdDr', 'drawing', '../drawings/drawing1.xml']],
        },
        {
          name: 'Chart1',
          chartsheet: true,
          tail: '<drawing r:id="rIdDr"/>',
          rels: [['rIdDr', 'drawing', '../drawings/drawing2.xml']],
        },
      ],
      {
        parts: {
          'drawings/drawing1.xml': sheetDrawing([{ kind: 'chart', rId: 'rIdC' }]),
          'drawings/_rels/drawing1.xml.rels': rels([['rIdC', 'chart', '../charts/chart1.xml']]),
          'charts/chart1.xml': chartXml({ title: 'North', series: [{ name: 'North', categories: ['Q1'], values: [10] }] }),
          'drawings/drawing2.xml': sheetDrawing([{ kind: 'chart', rId: 'rIdC' }]),
          'drawings/_rels/drawing2.xml.rels': rels([['rIdC', 'chart', '../charts/chart2.xml']]),
          'charts/chart2.xml': chartXml({ title: 'Whole year', series: [{ name: 'Total', categories: ['2024'], values: [42] }] }),
        },
      },
    );
    const doc = parseXlsx(file);
    expect(doc.blocks).toEqual([
      { kind: 'heading', text: 'Data', level: 1, page: 1, sheet: 'Data' },
      { kind: 'table_row', text: 'Quarter: Q1; North: 10', page: 1, sheet: 'Data' },
      { kind: 'paragraph', text: 'Chart: North. Bar chart. Series: North.', page: 1, sheet: 'Data' },
      { kind: 'table_row', text: 'Category: Q1; North: 10', page: 1, sheet: 'Data' },
      { kind: 'heading', text: 'Chart1', level: 1, page: 2, sheet: 'Chart1' },
      { kind: 'paragraph', text: 'Chart: Whole year. Bar chart. Series: Total.', page: 2, sheet: 'Chart1' },
      { kind: 'table_row', text: 'Category: 2024; Total: 42', page: 2, sheet: 'Chart1' },
    ]);
    expect(doc.pageCount).toBe(2);
  });
});

describe('a chart part read in one pass', () => {
  it('costs steps in proportion to its size', () => {
    const steps = (n: number) => {
      const values = Array.from({ length: n }, (_, i) => i);
      const budget = new ParseBudget(DEFAULT_PARSE_LIMITS);
      const series = Array.from({ length: 10 }, (_, s) => ({ name: `S${s}`, categories: values.map(String), values }));
      readChart(chartXml({ series }), budget);
      return DEFAULT_PARSE_LIMITS.maxSteps - (budget as unknown as { steps: number }).steps;
    };
    const [small, large] = [steps(100), steps(800)];
    expect(large / small).toBeGreaterThan(6);
    expect(large / small).toBeLessThan(9);
  });
});
