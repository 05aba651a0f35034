import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client.ts';
import { fixture } from '../support/documents.ts';
import { type Cast, castWithCollection } from '../support/fixtures.ts';
import { chunkRows, documentOfJob, ingestFile } from '../support/ingest.ts';

/**
 * One fixture of each format issue 24 added, uploaded through the API and ingested by the worker:
 * the job succeeds, and a search finds the file's own words in it. An image becomes one image
 * chunk, described (read) by the devstack's OCR model, with an image_url as a scanned page has.
 */

let cast: Cast;
let collectionId: string;

beforeAll(async () => {
  ({ cast, collectionId } = await castWithCollection('Formats'));
});

const search = (question: string) =>
  api('POST', '/query/search', { token: cast.memberQuery.token, body: { question, collection_id: collectionId, top_k: 10 } });

describe('each new format through the API and the ingest worker', () => {
  it.each([
    ['paul-graham-ideas.html', 'text/html', 'notice anomalies', 'The way to get new ideas is to notice anomalies'],
    ['unstructured-elements.json', 'application/json', 'favorite things Parrots', 'text: Parrots'],
    ['unstructured-elements.jsonl', 'application/jsonl', 'first thought second thought', 'This is my first thought'],
    ['tika-two-chapters.epub', 'application/epub+zip', 'text for chapter Two', 'This is the text for chapter Two'],
    ['tika-features.odt', 'application/vnd.oasis.opendocument.text', 'difficult test document', 'rather difficult test document'],
    ['columnar.ods', 'application/vnd.oasis.opendocument.spreadsheet', 'Square of the Record Number', 'This is row 3 of 10'],
    [
      'impress-two-slides.odp',
      'application/vnd.oasis.opendocument.presentation',
      'example Impress file',
      'An example Impress file',
    ],
    ['email-with-attachment.eml', 'message/rfc822', 'fake attachment', 'Hey this is a fake attachment!'],
  ])('%s (%s) is ingested and found by its words', async (name, contentType, question, words) => {
    const job = await ingestFile(cast.owner.token, name, collectionId);
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const documentId = (await documentOfJob(job.job_id)) as string;
    const listed = await api('GET', `/collections/${collectionId}/documents`, { token: cast.owner.token });
    expect(listed.body.find((d) => d.id === documentId)).toMatchObject({ name, content_type: contentType });
    const found = await search(question);
    expect(found.status).toBe(200);
    const hits = found.body.sources.filter((s) => s.document_id === documentId);
    expect(
      hits.some((s) => s.text.includes(words)),
      JSON.stringify(found.body.sources),
    ).toBe(true);
  });

  it.each([
    ['table-multi-row-column-cells.png', 'image/png', 'png'],
    ['layout-parser-paper.jpg', 'image/jpeg', 'jpg'],
  ])('%s becomes one image chunk, stored as %s and read by the vision model', async (name, mediaType, ext) => {
    const job = await ingestFile(cast.owner.token, name, collectionId);
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const documentId = (await documentOfJob(job.job_id)) as string;
    const chunks = await chunkRows(documentId);
    expect(chunks).toHaveLength(1);
    const [image] = chunks;
    expect(image).toMatchObject({ chunk_type: 'image_description', state: 'done', metadata: { origin: 'image' } });
    expect(image?.image_path).toMatch(new RegExp(`/images/001\\.${ext}$`));
    // The stored image is the upload itself, served with its own type.
    const passages = await api('GET', `/collections/${collectionId}/documents/${documentId}/passages/0`, {
      token: cast.memberQuery.token,
    });
    expect(passages.status).toBe(200);
    const passage = passages.body.passages.find((p) => p.chunk_index === 0);
    expect(passage?.image_url).toBeTruthy();
    const served = await fetch(passage?.image_url as string);
    expect(served.headers.get('content-type')).toContain(mediaType);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(fixture(name));
  });

  it('sends a WebP to the vision model as it came: a photograph without text has nothing for OCR to read', async () => {
    // The devstack's vision model only reads text; a real one describes the photograph. Either way the image
    // reached it and was decoded: an unreadable one would fail as an image that could not be described.
    const job = await ingestFile(cast.owner.token, 'kitten.webp', collectionId);
    expect(job.status).toBe('failed');
    expect(job.error_message).toBe('The document has no text that could be indexed');
  });

  it('finds an uploaded page scan by the words OCR read in it', async () => {
    const job = await ingestFile(cast.owner.token, 'layout-parser-paper.jpg', collectionId);
    const documentId = (await documentOfJob(job.job_id)) as string;
    const [image] = await chunkRows(documentId);
    expect(image?.text).toMatch(/LayoutParser/i);
    const found = await search('LayoutParser document image analysis');
    const hit = found.body.sources.find((s) => s.document_id === documentId);
    expect(hit).toMatchObject({ chunk_type: 'image_description' });
    expect(hit?.image_url).toBeTruthy();
  });

  it('an encrypted OpenDocument fails with a plain reason', async () => {
    const job = await ingestFile(cast.owner.token, 'password-protected.odt', collectionId);
    expect(job.status).toBe('failed');
    expect(job.error_message).toMatch(/password-protected/);
  });
});
