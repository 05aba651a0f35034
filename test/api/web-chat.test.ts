import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { chromiumAvailable } from '../support/browser.ts';
import { api, signUp, stack, type TestUser } from '../support/client.ts';
import { ingestFile } from '../support/ingest.ts';
import { longPdf } from '../support/long-pdf.ts';
import { docx } from '../support/ooxml-files.ts';
import { browserForFile, newPage, signInInBrowser } from '../support/web-pages.ts';

// The chat in a real browser, against the API worker and the devstack: answers in Markdown, citations opened at
// their passage, feedback, and questions over several collections.

const browser = browserForFile();

const RANCE =
  'The barrage at La Rance in Brittany has produced tidal power since 1966. Its turbines run on the ebb and the flood. ' +
  'Sluice gates let the flood tide into the estuary, and at high water they close behind it. '.repeat(6);

async function collectionWith(user: TestUser, name: string, files: [string, string | Uint8Array][]) {
  const created = await api('POST', '/collections/', { token: user.token, body: { name } });
  expect(created.status).toBe(200);
  for (const [file, content] of files)
    expect((await ingestFile(user.token, file, created.body.id, content)).status).toBe('succeeded');
  return created.body.id as string;
}

/** Asks in the page's ask box and waits for the answer to finish: one more answer, and none streaming. */
async function askInPage(page: Page, question: string) {
  const finished = page.locator('.message.assistant:not([aria-busy])');
  const before = await finished.count();
  await page.getByLabel('Your question').fill(question);
  await page.getByRole('button', { name: 'Ask', exact: true }).click();
  // A chat's first question moves to the chat's address, where the answer streams.
  await expect.poll(() => finished.count(), { timeout: 30_000 }).toBeGreaterThan(before);
  expect(await page.locator('.message.assistant[aria-busy]').count()).toBe(0);
}

const messages = (page: Page) => page.getByRole('list', { name: 'Messages' });
const sidebar = (page: Page) => page.getByRole('navigation', { name: 'Collections and chats' });

describe.skipIf(!chromiumAvailable)('the chat in headless Chromium', { timeout: 120_000 }, () => {
  it('keeps each chat at its own address: the sidebar lists it, a reload or the back button returns to it', async () => {
    const user = await signUp('web-chat');
    const id = await collectionWith(user, 'Tides', [['rance.txt', RANCE]]);
    const { page, foreign } = await newPage(browser());
    await signInInBrowser(page, user, `/app/c/${id}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('New chat');

    const question = 'When did La Rance start producing tidal power?';
    const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/query');
    await askInPage(page, question);
    await page.waitForURL(new RegExp(`/app/c/${id}/chat/[0-9a-f-]{36}$`));
    const chatUrl = page.url();
    expect(await messages(page).textContent()).toContain('1966');
    // The answer came as a stream of words, each its own event.
    expect((await (await answered).text()).split('event: token').length - 1).toBeGreaterThan(5);

    // The chat is in the sidebar under its collection, named after its first question, and marked as the current one.
    const link = sidebar(page).getByRole('link', { name: question });
    await expect.poll(() => link.getAttribute('aria-current')).toBe('page');
    expect(await link.getAttribute('href')).toBe(new URL(chatUrl).pathname);

    // Away to a page of the collection, and back: the chat and its answer are where they were.
    await sidebar(page).getByRole('list', { name: 'Tides pages' }).getByRole('link', { name: 'Documents' }).click();
    await page.waitForURL(`${stack.apiUrl}/app/c/${id}/documents`);
    await page.goBack();
    await page.waitForURL(chatUrl);
    await expect.poll(() => messages(page).textContent()).toContain('1966');

    // A deep link, in a fresh load, opens the same chat.
    await page.goto(chatUrl);
    await expect.poll(() => messages(page).textContent()).toContain('1966');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(question);

    // Rename, from the chat's options: the sidebar follows.
    await page.getByText('Chat options').click();
    await page.getByLabel('Rename this chat').fill('La Rance');
    await page.getByRole('button', { name: 'Rename' }).click();
    await expect.poll(() => sidebar(page).getByRole('link', { name: 'La Rance' }).count()).toBe(1);

    // A follow-up stays in the chat; stopping it, once it has begun, says so.
    await page.getByLabel('Your question').fill('How do the sluice gates and the turbines work at the barrage?');
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    const answering = messages(page).locator('.message.assistant .answer').last();
    await expect.poll(() => answering.textContent(), { interval: 10 }).not.toBe('');
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect.poll(() => messages(page).locator('.note').last().textContent()).toBe('Stopped.');
    expect(page.url()).toBe(chatUrl);
    // Regenerate asks the stopped question again, and its answer takes the stopped one's place.
    const answers = await messages(page).locator('.message.assistant').count();
    await page.getByRole('button', { name: 'Regenerate' }).click();
    await expect.poll(() => messages(page).locator('.message.assistant[aria-busy]').count()).toBe(0);
    await expect.poll(() => messages(page).locator('.message.assistant').last().textContent()).toMatch(/sluice gates/i);
    expect(await messages(page).locator('.message.assistant').count()).toBe(answers);
    expect(await messages(page).locator('.note').count()).toBe(0);

    // "New chat" starts afresh, at the collection's address.
    await sidebar(page).getByRole('link', { name: 'New chat' }).click();
    await page.waitForURL(`${stack.apiUrl}/app/c/${id}`);
    expect(await messages(page).locator('li').count()).toBe(0);
    expect(foreign).toEqual([]);
    await page.context().close();
  });

  it('renders a Markdown table as a table, and a hostile answer inert', async () => {
    const user = await signUp('web-markdown');
    const hostile =
      'The harbour master prints the tide tables every Monday <script>window.__pwned = 1</script> for the fishing fleet. ' +
      'The harbour master keeps the tide tables <img src="x" onerror="window.__pwned = 2"> beside the slipway. ' +
      'The harbour master posts the tide tables [online](javascript:window.__pwned=3) for the fishing fleet too.';
    const id = await collectionWith(user, 'Harbour', [
      [
        'fleet.csv',
        'Boat,Skipper,Home port\nMorning Star,Ann Kerr,Padstow\nSea Otter,Tom Pask,Newlyn\nBlue Heron,Iris Lund,Mevagissey\n',
      ],
      ['notices.txt', hostile],
    ]);
    const { page } = await newPage(browser());
    await signInInBrowser(page, user, `/app/c/${id}`);

    await askInPage(page, 'Which skipper sails the Sea Otter, and from which home port?');
    const table = messages(page).locator('.answer table').last();
    await table.waitFor();
    expect(await table.locator('th').allTextContents()).toEqual(expect.arrayContaining(['Boat', 'Skipper']));
    expect(await table.locator('td').allTextContents()).toContain('Tom Pask');

    await askInPage(page, 'When does the harbour master print and post the tide tables for the fishing fleet?');
    const answer = messages(page).locator('.answer').last();
    expect(await answer.textContent()).toContain('harbour master');
    // Quoted, not run: the markup is text, the link is not a link, and nothing was executed or fetched.
    expect(await answer.locator('script, img, iframe').count()).toBe(0);
    expect(await answer.locator('a[href^="javascript" i]').count()).toBe(0);
    expect(await answer.textContent()).toContain('<script>');
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await page.context().close();
  });

  it('shows a Word passage with its neighbours, and records a thumbs-down that the quality page counts', async () => {
    const user = await signUp('web-docx');
    const paragraph = (topic: string) =>
      `<w:p><w:r><w:t>${`${topic} `.repeat(1)}${'The guide describes the harbour and its rules in detail for every visitor. '.repeat(6)}</w:t></w:r></w:p>`;
    const guide = docx(
      [
        paragraph('Mooring is free for the first night.'),
        paragraph('Fuel is sold at the north quay from seven until noon.'),
        paragraph('Showers are beside the harbour office and need a token.'),
        paragraph('Pets must be kept on a lead on the pontoons.'),
      ].join(''),
    );
    const id = await collectionWith(user, 'Harbour guide', [['guide.docx', guide]]);
    const { page } = await newPage(browser());
    await signInInBrowser(page, user, `/app/c/${id}`);
    await askInPage(page, 'Where and when is fuel sold at the harbour?');

    await messages(page)
      .getByRole('button', { name: /^Source 1: guide\.docx$/ })
      .first()
      .click();
    const panel = page.getByRole('complementary', { name: /Source 1/ });
    const cited = panel.locator('mark.cited-passage');
    await cited.waitFor();
    expect(await cited.textContent()).toContain('Fuel is sold at the north quay');
    // The passages around it, in document order, unmarked.
    expect(await panel.locator('.passage').count()).toBeGreaterThan(1);
    await panel.getByRole('button', { name: 'Close' }).click();

    await page.getByRole('button', { name: 'Bad answer' }).click();
    await page.getByLabel('What was wrong? (optional)').fill('It leaves out the price.');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'comment is saved' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Bad answer' }).getAttribute('aria-pressed')).toBe('true');

    const records = await api('GET', `/evals/${id}`, { token: user.token });
    expect(records.body[0]).toMatchObject({ feedback: 'down', feedback_comment: 'It leaves out the price.' });

    // A reload keeps the rating on the answer; the quality page counts it and shows the comment.
    await page.reload();
    await expect.poll(() => page.getByRole('button', { name: 'Bad answer' }).getAttribute('aria-pressed')).toBe('true');
    await sidebar(page).getByRole('link', { name: 'Quality' }).click();
    await page.getByRole('heading', { name: 'Quality', level: 1 }).waitFor();
    await expect.poll(() => page.locator('main').textContent()).toMatch(/1 down/);
    await expect.poll(() => page.locator('main').textContent()).toContain('It leaves out the price.');
    await page.context().close();
  });

  it('opens a PDF citation at its page, with the cited passage highlighted', async () => {
    const user = await signUp('web-pdf');
    const pdf = longPdf();
    const id = await collectionWith(user, 'Gazetteer', [['gazetteer.pdf', pdf.bytes]]);
    const { page } = await newPage(browser());
    await signInInBrowser(page, user, `/app/c/${id}`);
    await askInPage(page, pdf.fact.question);
    // pdf.js is not part of the app: it loads when a PDF source is first opened.
    const pdfAssets: string[] = [];
    page.on('request', (request) => {
      if (/pdf/i.test(new URL(request.url()).pathname)) pdfAssets.push(request.url());
    });
    await messages(page).locator('button.cite').first().click();
    const view = page.locator('.pdf-view[data-state="ready"]');
    await view.waitFor({ timeout: 30_000 });
    expect(pdfAssets.some((url) => /PdfView.*\.js$/.test(url))).toBe(true);
    expect(await page.locator('.pdf-nav').textContent()).toContain(`Page ${pdf.fact.page} of ${pdf.pages.length}`);
    const highlighted = (await page.locator('.pdf-highlight').allTextContents()).join(' ');
    const words = (text: string) =>
      text
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, ' ')
        .trim();
    // The planted fact is what the answer cites, and what is marked on its page.
    expect(words(highlighted)).toContain(words(pdf.fact.sentence));
    await page.context().close();
  });

  it('asks over two collections at once, with a filter from the advanced control', async () => {
    const user = await signUp('web-two');
    const tides = await collectionWith(user, 'Tides', [
      ['rance.txt', RANCE],
      ['barrages.csv', 'Barrage,Country,Since\nLa Rance,France,1966\nSihwa Lake,South Korea,2011\n'],
    ]);
    const rivers = await collectionWith(user, 'Rivers', [
      ['severn.md', '# The Severn\n\nThe Severn bore is a tidal bore that runs up the estuary on the highest spring tides.\n'],
      ['severn-notes.txt', 'The Severn bore is a tidal wave that surfers ride up the estuary on spring tides.\n'],
    ]);
    const { page } = await newPage(browser());
    await signInInBrowser(page, user, `/app/c/${tides}`);

    await page.locator('.chooser summary').click();
    await page.getByRole('checkbox', { name: 'Rivers' }).check();
    // Markdown and plain text files only: not the spreadsheet that also names La Rance.
    await page.locator('.advanced summary').click();
    await page.getByRole('checkbox', { name: 'md', exact: true }).check();
    await page.getByRole('checkbox', { name: 'txt', exact: true }).check();
    await page.getByLabel('Reranking').selectOption('off');

    const sent = page.waitForRequest((request) => new URL(request.url()).pathname === '/query');
    await askInPage(page, 'What is the Severn bore, and since when has La Rance produced tidal power?');
    const body = (await sent).postDataJSON();
    expect(body.collection_ids).toEqual([tides, rivers]);
    expect(body.filter).toEqual({ type: { in: ['md', 'txt'] } });
    expect(body.rerank).toBe(false);

    // Sources from both collections: the panel lists each with its document.
    await page.getByRole('button', { name: /^Sources \(\d+\)$/ }).click();
    const panel = page.getByRole('complementary');
    const listed = await panel.locator('.source-list').textContent();
    expect(listed).toContain('rance.txt');
    expect(listed).toMatch(/severn(-notes)?\.(md|txt)/);
    expect(listed).not.toContain('barrages.csv');
    await panel.getByRole('button', { name: 'Close' }).click();

    // Narrowed to one document of the two collections' five: every source is from it. The chat's first question
    // moved it to the chat's own page, and the choices came along.
    await page.locator('.advanced summary').click();
    expect(await page.getByRole('checkbox', { name: 'md', exact: true }).isChecked()).toBe(true);
    await page.getByLabel('Only these documents').selectOption({ label: 'severn.md: The Severn' });
    const narrowed = page.waitForRequest((request) => new URL(request.url()).pathname === '/query');
    await askInPage(page, 'What is the Severn bore?');
    const severn = (await api('GET', `/collections/${rivers}/documents`, { token: user.token })).body.find(
      (doc: { name: string }) => doc.name === 'severn.md',
    );
    expect((await narrowed).postDataJSON().filter).toEqual({
      and: [{ type: { in: ['md', 'txt'] } }, { document_id: { in: [severn?.id] } }],
    });
    await messages(page)
      .getByRole('button', { name: /^Sources \(\d+\)$/ })
      .last()
      .click();
    const sources = await panel.locator('.source-list li').allTextContents();
    expect(sources.length).toBeGreaterThan(0);
    expect(sources.every((text) => text.includes('severn.md'))).toBe(true);

    // The chat lives in the first collection, and remembers both for a follow-up.
    await page.waitForURL(new RegExp(`/app/c/${tides}/chat/`));
    await page.reload();
    await expect.poll(() => page.locator('.chooser summary').textContent()).toContain('Tides, Rivers');
    await page.context().close();
  });
});
