import { describe, expect, it } from 'vitest';
import { decodeWords } from '../../../workers/ingest/src/parsers/eml.ts';
import { parseDocument } from '../../../workers/ingest/src/parsers/index.ts';
import type { ExtractedImage } from '../../../workers/ingest/src/parsers/types.ts';
import { fixture } from '../../support/documents.ts';

const encode = (text: string) => new TextEncoder().encode(text);
const texts = (blocks: { text: string }[]) => blocks.map((block) => block.text);

describe('EML', () => {
  it('reads the subject as the title, the headers as a line, the plain body and a base64 .txt attachment', async () => {
    const doc = await parseDocument('eml', fixture('email-with-attachment.eml'));
    expect(doc).toMatchObject({ title: 'Fake email with attachment', date: '2022-12-23' });
    expect(doc.blocks[0]).toEqual({ kind: 'heading', text: 'Fake email with attachment', level: 1 });
    expect(doc.blocks[1]?.text).toBe(
      'From: Mallori Harrell <mallori@unstructured.io>; To: Mallori Harrell <mallori@unstructured.io>; Date: Fri, 23 Dec 2022 12:08:48 -0600',
    );
    // multipart/alternative: the plain text once, not the HTML again.
    expect(texts(doc.blocks).filter((text) => text.includes('Here')).length).toBe(1);
    const attachment = doc.blocks.findIndex((block) => block.text === 'Attachment: fake-attachment.txt');
    expect(doc.blocks[attachment]).toMatchObject({ kind: 'heading', level: 1 });
    expect(doc.blocks[attachment + 1]?.text).toBe('Hey this is a fake attachment!');
  });

  it('decodes a base64 UTF-8 body, and reads each attachment under its own heading', async () => {
    const doc = await parseDocument('eml', fixture('email-two-attachments.eml'));
    expect(doc.title).toBe('EML 1');
    expect(doc.date).toBeUndefined();
    expect(texts(doc.blocks)).toEqual([
      'EML 1',
      'From: Bugs Bunny <Bugs.Bunny@acme.com>; To: Bugs Bunny <Bugs.Bunny@acme.com>',
      'Hi,',
      'This is test email for EML1',
      'Thanks,\nChetan',
      'Attachment: Test TxtA.txt',
      'This is Test TXTA File for parser',
      'Attachment: Test TxtB.txt',
      'This is Test TXTB File for parser',
    ]);
  });

  it('reads an HTML-only body through the HTML reader, quoted-printable decoded', async () => {
    const mail = [
      'From: =?utf-8?Q?Ren=C3=A9e?= <renee@example.com>',
      'To: team@example.com',
      'Subject: =?utf-8?B?UmFwcG9ydCBkZSBtYXLDqWU=?=',
      'Date: 3 Mar 2024 09:00:00 +0100',
      'Content-Type: text/html; charset=utf-8',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      '<h2>Mar=C3=A9e haute</h2><p>La mar=C3=A9e monte de <b>4 m</b> ce soir, =',
      'avant minuit.</p><table><tr><th>Port</th><th>Heure</th></tr><tr><td>Brest</td><td>21:40</td></tr></table>',
    ].join('\r\n');
    const doc = await parseDocument('eml', encode(mail));
    expect(doc).toMatchObject({ title: 'Rapport de marée', date: '2024-03-03' });
    expect(doc.blocks[1]?.text).toMatch(/^From: Renée <renee@example.com>/);
    expect(doc.blocks).toContainEqual({ kind: 'heading', text: 'Marée haute', level: 2 });
    expect(texts(doc.blocks)).toContain('La marée monte de 4 m ce soir, avant minuit.');
    expect(doc.blocks).toContainEqual({ kind: 'table_row', text: 'Port: Brest; Heure: 21:40' });
  });

  it('hands an image attachment over as an image, and says which attachments it could not read', async () => {
    const png = fixture('table-multi-row-column-cells.png');
    const mail = [
      'From: a@example.com',
      'To: b@example.com',
      'Subject: Scans',
      'Content-Type: multipart/mixed; boundary="x"',
      '',
      '--x',
      'Content-Type: text/plain',
      '',
      'The table is attached.',
      '--x',
      'Content-Type: image/png; name="table.png"',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from(png).toString('base64').replace(/.{76}/g, '$&\r\n'),
      '--x',
      'Content-Type: audio/mpeg; name="voice.mp3"',
      '',
      'ID3',
      '--x--',
    ].join('\r\n');
    const taken: ExtractedImage[] = [];
    const doc = await parseDocument('eml', encode(mail), undefined, {
      onImage: async (image) => {
        taken.push(image);
      },
    });
    expect(taken).toHaveLength(1);
    expect(taken[0]).toMatchObject({ mediaType: 'image/png', width: 1377, height: 648, origin: 'image' });
    expect(taken[0]?.bytes).toEqual(png);
    expect(texts(doc.blocks)).toContain('Attachment: table.png');
    expect(doc.warnings).toEqual(['1 attachment is of a type that cannot be read and was left out']);
  });

  it('decodes RFC 2047 words, joining adjacent ones', () => {
    expect(decodeWords('=?ISO-8859-1?Q?Andr=E9?= =?utf-8?B?IFBpcm9uZA==?=')).toBe('André Pirond');
  });
});
