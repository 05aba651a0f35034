import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client.ts';
import { type Cast, castWithCollection } from '../support/fixtures.ts';
import { chunkRows, documentOfJob, ingestFile } from '../support/ingest.ts';
import {
  chartXml,
  docx,
  docxGraphic,
  pptx,
  rels,
  sheetDrawing,
  slideGraphic,
  smartArtData,
  xlsx,
} from '../support/ooxml-files.ts';

/**
 * Charts through the real ingest worker: a file whose only content is charts is a document,
 * its chunks carry the charts' text, and search finds it on the slide the chart sits on. The
 * words are made up so that nothing else in the collection holds them; what is asserted is
 * that the text is there and the document is found, not scores, so it holds for sparse and
 * hybrid retrieval alike.
 */

let cast: Cast;
let collectionId: string;

beforeAll(async () => {
  ({ cast, collectionId } = await castWithCollection('Charts'));
});

const search = (question: string) =>
  api('POST', '/query/search', { token: cast.memberQuery.token, body: { question, collection_id: collectionId, top_k: 10 } });

/**
 * A deck of three slides with no text at all: a pie chart, a bar chart, a SmartArt diagram. Each
 * chart's title names its slide (a heading), and the first slide says enough to be a chunk of its
 * own, so the bar chart's rows are chunked with slide 2 alone.
 */
const deck = () =>
  pptx(
    [
      { shapes: slideGraphic('chart', 'rIdC'), rels: [['rIdC', 'chart', '../charts/chart1.xml']] },
      { shapes: slideGraphic('chart', 'rIdC'), rels: [['rIdC', 'chart', '../charts/chart2.xml']] },
      { shapes: slideGraphic('smartart', 'rIdD'), rels: [['rIdD', 'diagramData', '../diagrams/data1.xml']] },
    ],
    {
      'charts/chart1.xml': chartXml({
        plot: 'pieChart',
        title: 'Orchard mix',
        series: [
          {
            name: 'Trees',
            categories: ['Oak', 'Ash', 'Beech', 'Rowan', 'Hazel', 'Alder', 'Willow', 'Birch'],
            values: [30, 20, 12, 10, 9, 8, 6, 5],
          },
        ],
      }),
      'charts/chart2.xml': chartXml({
        title: 'Harvest by valley',
        categoryAxis: 'Valley',
        valueAxis: 'Tonnes',
        series: [
          { name: 'Zanthorpe cooperative', categories: ['Quillbrook', 'Marrowdale'], values: [412, 388] },
          { name: 'Vexley growers', categories: ['Quillbrook', 'Marrowdale'], values: [97, 145] },
        ],
      }),
      'diagrams/data1.xml': smartArtData(['Prune the Brindlewood rows', 'Graft', 'Harvest']),
    },
  );

describe('charts-only files', () => {
  it('ingest a deck of charts as a document that search finds on the chart’s slide', async () => {
    const job = await ingestFile(cast.owner.token, 'harvest-charts.pptx', collectionId, deck());
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    expect(job.error_message).toBeNull();
    expect(job.chunks_total).toBeGreaterThan(0);

    const documentId = (await documentOfJob(job.job_id)) as string;
    const chunks = await chunkRows(documentId);
    expect(chunks.every((c) => c.state === 'done')).toBe(true);
    const text = chunks.map((c) => c.text ?? '').join('\n');
    // Title, axes, series names, categories and values, each with what it means.
    for (const said of [
      'Chart: Harvest by valley',
      'Axes: Valley; Tonnes',
      'Valley: Quillbrook; Zanthorpe cooperative: 412; Vexley growers: 97',
      'Valley: Marrowdale; Zanthorpe cooperative: 388; Vexley growers: 145',
      'Category: Oak; Trees: 30',
      'Prune the Brindlewood rows',
    ]) {
      expect(text).toContain(said);
    }

    const bySeries = await search('How many tonnes did the Zanthorpe cooperative harvest in Quillbrook?');
    expect(bySeries.status).toBe(200);
    const hit = bySeries.body.sources.find((s) => s.document_id === documentId);
    expect(hit, JSON.stringify(bySeries.body.sources)).toBeDefined();
    expect(hit).toMatchObject({ source: 'harvest-charts.pptx', chunk_type: 'text', page: 2 });
    expect(hit?.text).toContain('Zanthorpe cooperative: 412');

    const byCategory = await search('Marrowdale');
    const found = byCategory.body.sources.filter((s) => s.document_id === documentId);
    expect(found.length).toBeGreaterThan(0);
    expect(found.find((s: { text: string }) => s.text.includes('Marrowdale'))).toMatchObject({ page: 2 });
  });

  it('ingest a Word document and a workbook whose only content is a chart', async () => {
    const chart = chartXml({
      title: 'Kestrel sightings',
      series: [{ name: 'Hollowmere hide', categories: ['May', 'June'], values: [14, 23] }],
    });
    const word = docx(`<w:p>${docxGraphic('chart', 'rIdC')}</w:p>`, {
      rels: [['rIdC', 'chart', 'charts/chart1.xml']],
      parts: { 'word/charts/chart1.xml': chart },
    });
    const workbook = xlsx(
      [
        {
          name: 'Sightings chart',
          chartsheet: true,
          tail: '<drawing r:id="rIdDr"/>',
          rels: [['rIdDr', 'drawing', '../drawings/drawing1.xml']],
        },
      ],
      {
        parts: {
          'drawings/drawing1.xml': sheetDrawing([{ kind: 'chart', rId: 'rIdC' }]),
          'drawings/_rels/drawing1.xml.rels': rels([['rIdC', 'chart', '../charts/chart1.xml']]),
          'charts/chart1.xml': chart,
        },
      },
    );
    for (const [name, bytes] of [
      ['kestrels.docx', word],
      ['kestrels.xlsx', workbook],
    ] as const) {
      const job = await ingestFile(cast.owner.token, name, collectionId, bytes);
      expect(job.status, `${name}: ${job.error_message}`).toBe('succeeded');
      const chunks = await chunkRows((await documentOfJob(job.job_id)) as string);
      expect(chunks.map((c) => c.text).join('\n'), name).toContain('Category: June; Hollowmere hide: 23');
    }
  });
});
