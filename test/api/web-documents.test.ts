import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { chromiumAvailable } from '../support/browser.ts';
import { api, signUp, type TestUser } from '../support/client.ts';
import { fixture } from '../support/documents.ts';
import { collectionWithLink } from '../support/fixtures.ts';
import { ingestFile } from '../support/ingest.ts';
import {
  browserForFile,
  hasFocus,
  newPage,
  PHONE,
  pageAndScreenWidths,
  seriousViolations,
  signInInBrowser,
} from '../support/web-pages.ts';

// The documents page of a collection in a real browser, against the API worker and the devstack: uploads with their
// progress, metadata, new versions, searching, deleting several at once, what a member who may only ask sees, a phone.

const browser = browserForFile();

/** Distinct sentences, `count` paragraphs of them: enough text for many chunks, so that indexing takes a while. */
const manyParagraphs = (count: number, topic: string) =>
  Array.from(
    { length: count },
    (_, i) =>
      `Paragraph ${i} about ${topic}: the survey of station ${i} measured ${i * 7} millimetres of rise over ${i + 3} years, ` +
      `and the keeper noted weather, wind from the ${['north', 'south', 'east', 'west'][i % 4]} and the state of the moorings. `.repeat(
        6,
      ),
  ).join('\n\n');

async function ownerWithCollection(name: string): Promise<{ owner: TestUser; id: string }> {
  const owner = await signUp('web-docs');
  const created = await api('POST', '/collections/', { token: owner.token, body: { name } });
  expect(created.status).toBe(200);
  return { owner, id: created.body.id as string };
}

async function openDocuments(page: Page, user: TestUser, id: string) {
  await signInInBrowser(page, user, `/app/c/${id}/documents`);
  await page.getByRole('heading', { level: 1, name: 'Documents' }).waitFor();
}

const rows = (page: Page) => page.getByRole('table').locator('tbody tr');
/** The page's line for what was just done (deleted, saved), announced politely. */
const notice = (page: Page) => page.locator('main p.notice[role="status"]');
const row = (page: Page, name: string) => rows(page).filter({ has: page.getByRole('link', { name, exact: true }) });
/** The documents the table shows, by name, in its order. */
const names = (page: Page) => rows(page).locator('td.name a').allTextContents();

async function listed(token: string, id: string): Promise<{ id: string; name: string; chunk_count: number; metadata: object }[]> {
  const response = await api('GET', `/collections/${id}/documents`, { token });
  expect(response.status).toBe(200);
  return response.body as never;
}

/** Records every progress bar's name and every status text the page shows from now on, however briefly. */
function watchProgress(page: Page) {
  return page.evaluate(() => {
    const seen = new Set<string>();
    (window as unknown as { seenProgress: Set<string> }).seenProgress = seen;
    new MutationObserver(() => {
      for (const bar of Array.from(document.querySelectorAll('progress'))) seen.add(`bar: ${bar.getAttribute('aria-label')}`);
      for (const text of Array.from(document.querySelectorAll('.job, [role="status"]'))) seen.add(text.textContent ?? '');
    }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
}
const seenProgress = (page: Page) => page.evaluate(() => [...(window as unknown as { seenProgress: Set<string> }).seenProgress]);

describe.skipIf(!chromiumAvailable)('the documents page in headless Chromium', { timeout: 150_000 }, () => {
  it('uploads two files at once with their bytes and indexing shown live, then lists them; polling stops when all end', async () => {
    const { owner, id } = await ownerWithCollection('Uploads');
    const { page, foreign } = await newPage(browser());
    await openDocuments(page, owner, id);
    await expect.poll(() => page.textContent('main')).toContain('No documents yet');
    const jobPolls: number[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/ingest/jobs') jobPolls.push(Date.now());
    });
    await watchProgress(page);

    await page.getByLabel('Choose files').setInputFiles([
      {
        name: 'handbook-1p.docx',
        mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        buffer: Buffer.from(fixture('handbook-1p.docx')),
      },
      { name: 'station-log.txt', mimeType: 'text/plain', buffer: Buffer.from(manyParagraphs(120, 'tides')) },
    ]);
    const arriving = page.getByRole('list', { name: 'Arriving' });
    await expect.poll(() => arriving.locator('[data-status="succeeded"]').count(), { timeout: 120_000, interval: 250 }).toBe(2);
    await expect.poll(() => rows(page).count()).toBe(2);

    const seen = await seenProgress(page);
    expect(seen.some((text) => /^Uploading: .+ of .+$/.test(text))).toBe(true);
    expect(seen).toContain('bar: station-log.txt progress');
    // The long file's row, while its job ran: the chunks indexed so far, a bar, a way to cancel.
    expect(seen.some((text) => /Indexing: \d+ of \d+ chunks/.test(text))).toBe(true);
    expect(seen).toContain('bar: Indexing station-log.txt');

    const documents = await listed(owner.token, id);
    const log = documents.find((doc) => doc.name === 'station-log.txt');
    expect(log?.chunk_count).toBeGreaterThan(20);
    const logRow = row(page, 'station-log.txt');
    await expect.poll(() => logRow.locator('td[data-label="Status"]').textContent()).toBe('Indexed');
    expect(await logRow.locator('td[data-label="Type"]').textContent()).toBe('TXT');
    expect(await logRow.locator('td[data-label="Chunks"]').textContent()).toBe(String(log?.chunk_count));
    expect(await row(page, 'handbook-1p.docx').getByRole('link', { name: 'handbook-1p.docx' }).getAttribute('href')).toMatch(
      /\/storage\/v1\/object\/sign\//,
    );

    // No job left running: the page stops asking.
    const pollsAtEnd = jobPolls.length;
    await page.waitForTimeout(3_000);
    expect(jobPolls.length - pollsAtEnd).toBeLessThanOrEqual(1);
    expect(foreign).toEqual([]);
    await page.context().close();
  });

  it('edits metadata in a dialog, shows the API’s refusal beside the entry, saves, and gives the focus back', async () => {
    const { owner, id } = await ownerWithCollection('Metadata');
    await ingestFile(owner.token, 'handbook-1p.docx', id);
    const { page } = await newPage(browser());
    await openDocuments(page, owner, id);

    const edit = page.getByRole('button', { name: 'Edit metadata of handbook-1p.docx' });
    await edit.click();
    const dialog = page.getByRole('dialog', { name: 'Metadata of handbook-1p.docx' });
    await dialog.getByRole('button', { name: 'Add an entry' }).click();
    const first = dialog.getByRole('group', { name: 'Entry 1' });
    expect(await hasFocus(first.getByLabel('Key'))).toBe(true);
    await first.getByLabel('Key').fill('company');
    await first.getByLabel('Value').fill('Acme');
    await dialog.getByRole('button', { name: 'Add an entry' }).click();
    const second = dialog.getByRole('group', { name: 'Entry 2' });
    await second.getByLabel('Key').fill('fiscal-year');
    await second.getByLabel('Type').selectOption('number');
    await second.getByLabel('Value').fill('2025');
    await dialog.getByRole('button', { name: 'Save metadata' }).click();
    // The API names the key it refuses; the page shows why beside that entry, and nothing was saved.
    await expect.poll(() => second.locator('.error').textContent()).toMatch(/letters, digits and _/);
    expect(await second.getByLabel('Key').getAttribute('aria-invalid')).toBe('true');
    expect((await listed(owner.token, id))[0]?.metadata).toEqual({});

    await second.getByLabel('Key').fill('fiscal_year');
    await dialog.getByRole('button', { name: 'Add an entry' }).click();
    const third = dialog.getByRole('group', { name: 'Entry 3' });
    await third.getByLabel('Key').fill('tags');
    await third.getByLabel('Type').selectOption('list');
    await third.getByLabel('Value').fill('policy\nstaff, contractors');
    await dialog.getByRole('button', { name: 'Save metadata' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect(await hasFocus(edit)).toBe(true);
    expect(await notice(page).textContent()).toBe('Saved the metadata of handbook-1p.docx.');
    expect((await listed(owner.token, id))[0]?.metadata).toEqual({
      company: 'Acme',
      fiscal_year: 2025,
      tags: ['policy', 'staff, contractors'],
    });
    const badges = page.getByRole('list', { name: 'Metadata of handbook-1p.docx' }).getByRole('listitem');
    await expect
      .poll(() => badges.allTextContents())
      .toEqual(['company: Acme', 'fiscal_year: 2025', 'tags: policy, staff, contractors']);

    // Opened again, the dialog holds what was saved; an entry removed is gone once saved.
    await edit.click();
    expect(await dialog.getByRole('group', { name: 'Entry 2' }).getByLabel('Value').inputValue()).toBe('2025');
    await dialog.getByRole('button', { name: 'Remove entry 3' }).click();
    await dialog.getByRole('button', { name: 'Save metadata' }).click();
    await expect.poll(async () => (await listed(owner.token, id))[0]?.metadata).toEqual({ company: 'Acme', fiscal_year: 2025 });
    await page.context().close();
  });

  it('replaces a document with a new version, its progress in its row, keeping its metadata', async () => {
    const { owner, id } = await ownerWithCollection('Versions');
    const old = await ingestFile(owner.token, 'harbour-notes.txt', id, manyParagraphs(3, 'the harbour'));
    const [before] = await listed(owner.token, id);
    expect(
      (
        await api('PATCH', `/collections/${id}/documents/${before?.id}`, {
          token: owner.token,
          body: { metadata: { port: 'Brest' } },
        })
      ).status,
    ).toBe(200);
    const { page } = await newPage(browser());
    await openDocuments(page, owner, id);
    await watchProgress(page);

    await page.getByLabel('Replace harbour-notes.txt with a new version').setInputFiles({
      name: 'harbour-notes-2026.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from(manyParagraphs(60, 'the harbour')),
    });
    await expect.poll(() => names(page), { timeout: 90_000 }).toEqual(['harbour-notes-2026.txt']);
    const after = await listed(owner.token, id);
    expect(after.map((doc) => doc.name)).toEqual(['harbour-notes-2026.txt']);
    expect(after[0]?.chunk_count).toBeGreaterThan(old.chunks_total);
    expect(after[0]?.metadata).toEqual({ port: 'Brest' });
    await expect
      .poll(() => row(page, 'harbour-notes-2026.txt').locator('td[data-label="Chunks"]').textContent())
      .toBe(String(after[0]?.chunk_count));
    // While it was indexed the old row stood, showing the new version's progress; no second row.
    expect((await seenProgress(page)).some((text) => text.startsWith('bar: Uploading a new version of harbour-notes.txt'))).toBe(
      true,
    );

    // The same bytes again are refused, and the row says why.
    await page
      .getByLabel('Replace harbour-notes-2026.txt with a new version')
      .setInputFiles({ name: 'again.txt', mimeType: 'text/plain', buffer: Buffer.from(manyParagraphs(60, 'the harbour')) });
    await expect
      .poll(() => row(page, 'harbour-notes-2026.txt').getByRole('alert').textContent())
      .toMatch(/^again\.txt was not taken/);
    await page.context().close();
  });

  it('filters by search text, type and status, and deletes two selected documents after naming them', async () => {
    const { owner, id } = await ownerWithCollection('Filters');
    await ingestFile(owner.token, 'handbook-1p.docx', id);
    await ingestFile(owner.token, 'stanley-cups.csv', id);
    await ingestFile(owner.token, 'keepers.txt', id, 'Lighthouse keepers kept a log of every ship that passed. '.repeat(3));
    const docs = await listed(owner.token, id);
    const keepers = docs.find((doc) => doc.name === 'keepers.txt');
    await api('PATCH', `/collections/${id}/documents/${keepers?.id}`, {
      token: owner.token,
      body: { metadata: { region: 'Finistère' } },
    });
    const { page } = await newPage(browser());
    await openDocuments(page, owner, id);
    await expect.poll(() => rows(page).count()).toBe(3);

    const search = page.getByLabel('Search documents');
    await search.fill('finistère');
    await expect.poll(() => names(page)).toEqual(['keepers.txt']);
    await search.fill('HANDBOOK');
    await expect.poll(() => names(page)).toEqual(['handbook-1p.docx']);
    await search.fill('nothing like this');
    await expect.poll(() => page.textContent('main')).toContain('No documents match.');
    await search.fill('');
    await page.getByLabel('Type').selectOption('csv');
    await expect.poll(() => names(page)).toEqual(['stanley-cups.csv']);
    await page.getByLabel('Type').selectOption('');
    await page.getByLabel('Status').selectOption('running');
    await expect.poll(() => rows(page).count()).toBe(0);
    await page.getByLabel('Status').selectOption('indexed');
    await expect.poll(() => rows(page).count()).toBe(3);

    // Sorted by name, then back to newest first.
    await page.getByRole('button', { name: 'Name', exact: true }).click();
    expect(await names(page)).toEqual(['handbook-1p.docx', 'keepers.txt', 'stanley-cups.csv']);
    expect(await page.getByRole('columnheader', { name: 'Name' }).getAttribute('aria-sort')).toBe('ascending');

    await page.getByLabel('Select handbook-1p.docx').check();
    await page.getByLabel('Select stanley-cups.csv').check();
    expect(await page.getByLabel('Select all shown documents').evaluate((box) => (box as HTMLInputElement).indeterminate)).toBe(
      true,
    );
    await page.getByRole('button', { name: 'Delete selected (2)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete 2 documents?' });
    await expect.poll(() => dialog.getByRole('listitem').allTextContents()).toEqual(['stanley-cups.csv', 'handbook-1p.docx']);
    expect(await dialog.textContent()).toContain('This cannot be undone.');
    await dialog.getByRole('button', { name: 'Keep them' }).click();
    expect(await rows(page).count()).toBe(3);
    await page.getByRole('button', { name: 'Delete selected (2)' }).click();
    await dialog.getByRole('button', { name: 'Delete 2 documents' }).click();
    await expect.poll(() => notice(page).textContent()).toBe('Deleted 2 documents.');
    await expect.poll(() => names(page)).toEqual(['keepers.txt']);
    expect((await listed(owner.token, id)).map((doc) => doc.name)).toEqual(['keepers.txt']);
    expect(await page.getByRole('button', { name: 'Delete selected (0)' }).isDisabled()).toBe(true);

    // One at a time, from its row; the outcome takes the focus from the button that went with the row.
    await page.getByRole('button', { name: 'Delete keepers.txt' }).click();
    await page.getByRole('dialog', { name: 'Delete “keepers.txt”?' }).getByRole('button', { name: 'Delete document' }).click();
    await expect.poll(() => page.textContent('main')).toContain('No documents yet');
    await expect.poll(() => hasFocus(notice(page))).toBe(true);
    expect(await listed(owner.token, id)).toEqual([]);
    await page.context().close();
  });

  it('keeps the personal space’s documents through its own routes: listed, metadata saved, deleted', async () => {
    const user = await signUp('web-docs-personal');
    await ingestFile(user.token, 'personal-notes.txt', undefined, 'Notes kept for myself about the spring tides. '.repeat(3));
    const { page } = await newPage(browser());
    await signInInBrowser(page, user, '/app/personal/documents');
    await expect.poll(() => names(page)).toEqual(['personal-notes.txt']);

    await page.getByRole('button', { name: 'Edit metadata of personal-notes.txt' }).click();
    const dialog = page.getByRole('dialog', { name: 'Metadata of personal-notes.txt' });
    await dialog.getByRole('button', { name: 'Add an entry' }).click();
    await dialog.getByLabel('Key').fill('reviewed');
    await dialog.getByLabel('Type').selectOption('boolean');
    await dialog.getByLabel('Value').selectOption('false');
    await dialog.getByRole('button', { name: 'Save metadata' }).click();
    const personal = async () => (await api('GET', '/ingest/documents', { token: user.token })).body as { metadata: object }[];
    await expect.poll(async () => (await personal())[0]?.metadata).toEqual({ reviewed: false });

    await page.getByRole('button', { name: 'Delete personal-notes.txt' }).click();
    await page
      .getByRole('dialog', { name: 'Delete “personal-notes.txt”?' })
      .getByRole('button', { name: 'Delete document' })
      .click();
    await expect.poll(() => notice(page).textContent()).toBe('Deleted personal-notes.txt.');
    expect(await personal()).toEqual([]);
    await page.context().close();
  });

  it('shows a member who may only ask the table without a control that would change it', async () => {
    const owner = await signUp('web-docs-owner');
    const { collection, link } = await collectionWithLink(owner, 'Shared handbooks', 'query');
    await ingestFile(owner.token, 'handbook-1p.docx', collection.id);
    const member = await signUp('web-docs-asker');
    expect((await api('POST', `/collections/join/${link.share_token}`, { token: member.token })).status).toBe(200);
    const { page } = await newPage(browser());
    await openDocuments(page, member, collection.id);
    await expect.poll(() => rows(page).count()).toBe(1);
    expect(await row(page, 'handbook-1p.docx').locator('td[data-label="Status"]').textContent()).toBe('Indexed');
    for (const control of [
      'Choose files',
      'Add a web page by its address',
      'Select all shown documents',
      'Select handbook-1p.docx',
    ]) {
      expect(await page.getByLabel(control).count(), control).toBe(0);
    }
    expect(
      await page
        .locator('main')
        .getByRole('button', { name: /Edit|Delete|Replace|Cancel/ })
        .count(),
    ).toBe(0);
    expect(await page.getByLabel('Replace handbook-1p.docx with a new version').count()).toBe(0);
    await page.context().close();
  });

  it('lets a member who may add documents add them, but not change or delete them (the owner’s alone)', async () => {
    const owner = await signUp('web-docs-owner');
    const { collection, link } = await collectionWithLink(owner, 'Team handbooks', 'ingest');
    await ingestFile(owner.token, 'handbook-1p.docx', collection.id);
    const member = await signUp('web-docs-adder');
    expect((await api('POST', `/collections/join/${link.share_token}`, { token: member.token })).status).toBe(200);
    const { page } = await newPage(browser());
    await openDocuments(page, member, collection.id);
    await expect.poll(() => rows(page).count()).toBe(1);
    expect(await page.getByLabel('Choose files').count()).toBe(1);
    expect(
      await page
        .locator('main')
        .getByRole('button', { name: /Edit metadata|Delete/ })
        .count(),
    ).toBe(0);
    await page.context().close();
  });

  it('fits a 360-pixel phone, one card per document, and has no serious axe-core violation, light or dark', async () => {
    const { owner, id } = await ownerWithCollection('Phone');
    await ingestFile(owner.token, 'handbook-1p.docx', id);
    const longName = `${'a-very-long-file-name-without-spaces-'.repeat(4)}.txt`;
    await ingestFile(owner.token, longName, id, 'Short notes about tides and harbours. '.repeat(3));
    const [latest] = await listed(owner.token, id);
    await api('PATCH', `/collections/${id}/documents/${latest?.id}`, {
      token: owner.token,
      body: { metadata: { description: 'x'.repeat(120), tags: ['one', 'two', 'three'] } },
    });

    const { page } = await newPage(browser(), { viewport: PHONE });
    await openDocuments(page, owner, id);
    await expect.poll(() => rows(page).count()).toBe(2);
    await page.waitForLoadState('networkidle');
    const [width, screen] = await pageAndScreenWidths(page);
    expect(width).toBeLessThanOrEqual(screen);
    // Cards, not a table wider than the screen.
    const box = await rows(page).first().boundingBox();
    expect(box?.width).toBeLessThanOrEqual(screen);
    await page.getByRole('button', { name: `Edit metadata of ${longName}` }).click();
    expect((await pageAndScreenWidths(page))[0]).toBeLessThanOrEqual(screen);
    await page.context().close();

    const found: Record<string, string[]> = {};
    for (const scheme of ['light', 'dark'] as const) {
      const { page: themed } = await newPage(browser(), { colorScheme: scheme });
      await openDocuments(themed, owner, id);
      await expect.poll(() => rows(themed).count()).toBe(2);
      await themed.waitForLoadState('networkidle');
      found[`${scheme} table`] = await seriousViolations(themed);
      await themed.getByLabel('Select handbook-1p.docx').check();
      await themed.getByRole('button', { name: 'Edit metadata of handbook-1p.docx' }).click();
      await themed.getByRole('dialog').getByRole('button', { name: 'Add an entry' }).click();
      found[`${scheme} metadata dialog`] = await seriousViolations(themed);
      await themed.keyboard.press('Escape');
      await themed.getByRole('button', { name: 'Delete selected (1)' }).click();
      found[`${scheme} delete dialog`] = await seriousViolations(themed);
      await themed.context().close();
    }
    expect(found).toEqual(Object.fromEntries(Object.keys(found).map((key) => [key, []])));
  });
});
