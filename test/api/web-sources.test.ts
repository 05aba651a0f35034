import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { chromiumAvailable } from '../support/browser.ts';
import { api, signUp, stack, type TestUser } from '../support/client.ts';
import { collectionWithLink } from '../support/fixtures.ts';
import {
  browserForFile,
  hasFocus,
  newPage,
  PHONE,
  pageAndScreenWidths,
  seriousViolations,
  signInInBrowser,
} from '../support/web-pages.ts';

// The sources page in a real browser, against the API and ingest workers and the devstack: a page of the test page
// server (an origin the test stack trusts) added through the form as a single-URL source, its first sync watched to
// the end, synced again, its runs opened, paused, deleted after the confirmation; the personal space's page; what a
// member who may only ask sees; a phone; axe-core in both themes.

const browser = browserForFile();
const ARTICLE = `${stack.pagesUrl}/article.html`;

type Source = { id: string; url: string; paused: boolean; pages: number; last_run: { status: string } | null };

async function ownerWithCollection(name: string): Promise<{ owner: TestUser; id: string }> {
  const owner = await signUp('web-sources');
  const created = await api('POST', '/collections/', { token: owner.token, body: { name } });
  expect(created.status).toBe(200);
  return { owner, id: created.body.id as string };
}

async function sourcesIn(token: string, place: string): Promise<Source[]> {
  const response = await api('GET', `/sources?collection_id=${place}`, { token });
  expect(response.status).toBe(200);
  return response.body as Source[];
}

const cards = (page: Page) => page.getByRole('list', { name: 'Sources', exact: true }).locator('li.source');
const card = (page: Page, url: string) => cards(page).filter({ has: page.getByRole('link', { name: url, exact: true }) });
/** The page's line for what was just done (added, deleted), announced politely. */
const notice = (page: Page) => page.locator('main p.notice[role="status"]');
const count = (within: Locator, name: string) => within.locator(`[data-count="${name}"] dd`).first().textContent();

/** Records every run status and progress bar the page shows from now on, however briefly. */
function watchStatuses(page: Page) {
  return page.evaluate(() => {
    const seen = new Set<string>();
    (window as unknown as { seenStatuses: Set<string> }).seenStatuses = seen;
    new MutationObserver(() => {
      for (const bar of Array.from(document.querySelectorAll('progress'))) seen.add(`bar: ${bar.getAttribute('aria-label')}`);
      for (const status of Array.from(document.querySelectorAll('li.source .run-status'))) seen.add(status.textContent ?? '');
    }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
}
const seenStatuses = (page: Page) => page.evaluate(() => [...(window as unknown as { seenStatuses: Set<string> }).seenStatuses]);

async function openSources(page: Page, user: TestUser, path: string) {
  await signInInBrowser(page, user, path);
  await page.getByRole('heading', { level: 1, name: 'Sources' }).waitFor();
}

/** Adds `url` through the form, as one page or as a site. */
async function addThroughForm(page: Page, url: string, kind: 'page' | 'site' = 'page') {
  const form = page.getByRole('form', { name: 'Add a source' });
  await form.getByLabel('Address', { exact: true }).fill(url);
  if (kind === 'page') await form.getByLabel('This page only').check();
  await form.getByRole('button', { name: 'Add source' }).click();
}

describe.skipIf(!chromiumAvailable)('the sources page in headless Chromium', { timeout: 180_000 }, () => {
  it('adds a page through the form, shows its sync live to the end, syncs again, opens the runs, pauses and deletes it', async () => {
    const { owner, id } = await ownerWithCollection('Tides on the web');
    const { page, foreign } = await newPage(browser());
    // The page's code is a chunk of its own, fetched when the page is first opened, not with the first page.
    const chunks: string[] = [];
    page.on('request', (request) => {
      if (/\/assets\/SourcesPage-[\w-]+\.js$/.test(request.url())) chunks.push(request.url());
    });
    // The way in: the sidebar's link beside Documents.
    await signInInBrowser(page, owner, `/app/c/${id}/documents`);
    await page.getByRole('heading', { level: 1, name: 'Documents' }).waitFor();
    expect(chunks).toEqual([]);
    await page.getByRole('list', { name: 'Tides on the web pages' }).getByRole('link', { name: 'Sources' }).click();
    await page.waitForURL(`**/app/c/${id}/sources`);
    await page.getByRole('heading', { level: 1, name: 'Sources' }).waitFor();
    await expect.poll(() => page.textContent('main')).toContain('No sources yet');
    expect(chunks).toHaveLength(1);
    const sourcePolls: number[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/sources') sourcePolls.push(Date.now());
    });

    // The advanced part is the crawl's, for a site only.
    await watchStatuses(page);
    const form = page.getByRole('form', { name: 'Add a source' });
    await form.getByText('Advanced').click();
    expect(await form.getByLabel('Most pages').inputValue()).toBe('200');
    expect(await form.getByLabel('Depth').inputValue()).toBe('3');
    await form.getByLabel('Sync by itself').selectOption({ label: 'Every day' });
    await addThroughForm(page, ARTICLE);
    await expect.poll(() => notice(page).textContent()).toBe(`Added ${ARTICLE}: its first sync is running.`);
    await expect.poll(() => form.getByLabel('Address', { exact: true }).inputValue()).toBe('');

    const added = card(page, ARTICLE);
    await added.waitFor();
    await expect.poll(() => added.getAttribute('data-status'), { timeout: 90_000, interval: 250 }).toBe('succeeded');
    expect(await added.locator('.run-status strong').textContent()).toBe('Synced');
    expect(await count(added, 'found')).toBe('1');
    expect(await count(added, 'added')).toBe('1');
    expect(await count(added, 'failed')).toBe('0');
    expect(await added.textContent()).toContain('Single page');
    expect(await added.getByLabel(`Schedule of ${ARTICLE}`).inputValue()).toBe('daily');
    const [made] = await sourcesIn(owner.token, id);
    expect(made).toMatchObject({ url: ARTICLE, pages: 1, paused: false, last_run: { status: 'succeeded' } });
    const documents = await api('GET', `/collections/${id}/documents`, { token: owner.token });
    expect((documents.body as unknown[]).length).toBe(1);

    // The pages it keeps, by title.
    await added.getByText('Pages it keeps').click();
    await added.getByRole('list', { name: 'Pages' }).getByRole('link', { name: 'Tidal energy explained' }).waitFor();

    // No sync running: the page stops asking.
    const pollsAtEnd = sourcePolls.length;
    await page.waitForTimeout(3_000);
    expect(sourcePolls.length - pollsAtEnd).toBeLessThanOrEqual(1);

    // Again, on demand: a second run, the page unchanged.
    await added.getByRole('button', { name: `Sync now: ${ARTICLE}` }).click();
    await expect
      .poll(async () => (await api('GET', `/sources/${made?.id}/runs`, { token: owner.token })).body, { timeout: 90_000 })
      .toMatchObject([
        { trigger: 'manual', status: 'succeeded' },
        { trigger: 'created', status: 'succeeded' },
      ]);
    await expect.poll(() => added.getAttribute('data-status'), { timeout: 10_000 }).toBe('succeeded');
    // While a sync ran, the card said so with a bar and its counts (the first sync or this one: a page is quick).
    const seen = await seenStatuses(page);
    expect(seen).toContain(`bar: Syncing ${ARTICLE}`);
    expect(seen.some((text) => /^Syncing\d+ of \d+ pages fetched/.test(text))).toBe(true);

    // The runs, newest first, each with its trigger, status, times and counts.
    const history = added.getByRole('button', { name: `Run history of ${ARTICLE}` });
    await history.click();
    const dialog = page.getByRole('dialog', { name: `Run history of ${ARTICLE}` });
    const runs = dialog.getByRole('list', { name: 'Runs, newest first' }).locator(':scope > li');
    await expect.poll(() => runs.count()).toBe(2);
    expect(await runs.nth(0).textContent()).toContain('On demand');
    expect(await runs.nth(1).textContent()).toContain('When added');
    expect(await runs.nth(1).locator('.run-status strong').textContent()).toBe('Synced');
    expect(await runs.nth(0).locator('time').count()).toBeGreaterThanOrEqual(2);
    expect(await count(runs.nth(1), 'added')).toBe('1');
    expect(await count(runs.nth(0), 'added')).toBe('0');
    await dialog.getByRole('button', { name: 'Close' }).click();
    expect(await dialog.isVisible()).toBe(false);
    expect(await hasFocus(history)).toBe(true);

    // Paused: its schedule waits, and the button says how to undo it.
    await added.getByRole('button', { name: `Pause ${ARTICLE}` }).click();
    await added.getByRole('button', { name: `Resume ${ARTICLE}` }).waitFor();
    expect(await added.getAttribute('data-paused')).toBe('true');
    expect((await sourcesIn(owner.token, id))[0]?.paused).toBe(true);

    // Deleted, after a question that says what goes with it.
    await added.getByRole('button', { name: `Delete source ${ARTICLE}` }).click();
    const confirm = page.getByRole('dialog', { name: `Delete the source ${ARTICLE}?` });
    expect(await confirm.textContent()).toContain('1 document');
    expect(await hasFocus(confirm.getByRole('button', { name: 'Keep it' }))).toBe(true);
    await confirm.getByRole('button', { name: 'Delete source and 1 document' }).click();
    await expect.poll(() => notice(page).textContent()).toBe(`Deleted ${ARTICLE} and 1 document.`);
    await expect.poll(() => hasFocus(notice(page))).toBe(true);
    expect(await cards(page).count()).toBe(0);
    expect(await sourcesIn(owner.token, id)).toEqual([]);
    const left = await api('GET', `/collections/${id}/documents`, { token: owner.token });
    expect(left.body).toEqual([]);
    expect(foreign).toEqual([]);
    await page.context().close();
  });

  it('keeps the personal space’s sources apart, says why an address is refused, and offers no sources to a member who may only ask', async () => {
    const owner = await signUp('web-sources-personal');
    const { page } = await newPage(browser());
    await signInInBrowser(page, owner, '/app/personal/documents');
    await page.getByRole('navigation').getByRole('link', { name: 'Sources' }).first().click();
    await page.waitForURL('**/app/personal/sources');
    await page.getByRole('heading', { level: 1, name: 'Sources' }).waitFor();

    // An address the service may not fetch (loopback, but not the trusted origin): the API's reason, and nothing added.
    await addThroughForm(page, 'http://127.0.0.1:9/private.html');
    const form = page.getByRole('form', { name: 'Add a source' });
    await form.locator('.error').first().waitFor();
    expect((await form.locator('.error').first().textContent())?.length).toBeGreaterThan(0);
    expect(await sourcesIn(owner.token, 'personal')).toEqual([]);

    await addThroughForm(page, ARTICLE);
    await expect
      .poll(() => card(page, ARTICLE).getAttribute('data-status'), { timeout: 90_000, interval: 250 })
      .toBe('succeeded');
    const [mine] = await sourcesIn(owner.token, 'personal');
    expect(mine).toMatchObject({ url: ARTICLE, pages: 1 });
    expect((mine as Source & { collection_id: string | null }).collection_id).toBeNull();
    await page.context().close();

    // A member who may only ask: no Sources in the collection's pages, and its address is no page.
    const { collection, link } = await collectionWithLink(owner, 'Asked only', 'query');
    const member = await signUp('web-sources-member');
    expect((await api('POST', `/collections/join/${link.share_token}`, { token: member.token })).status).toBe(200);
    const { page: theirs } = await newPage(browser());
    await signInInBrowser(theirs, member, `/app/c/${collection.id}/documents`);
    const pages = theirs.getByRole('list', { name: 'Asked only pages' });
    await pages.getByRole('link', { name: 'Documents' }).waitFor();
    expect(await pages.getByRole('link', { name: 'Sources' }).count()).toBe(0);
    await theirs.goto(`${stack.apiUrl}/app/c/${collection.id}/sources`);
    await theirs.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
    await theirs.context().close();
  });

  it('fits a 360-pixel phone and has no serious axe-core violation, light or dark, dialogs included', async () => {
    const { owner, id } = await ownerWithCollection('Phone sources');
    const created = await api('POST', '/sources', {
      token: owner.token,
      body: { url: ARTICLE, kind: 'url', collection_id: id, schedule: 'weekly' },
    });
    expect(created.status).toBe(201);
    const sourceId = (created.body as { id: string }).id;
    await expect
      .poll(async () => (await api('GET', `/sources/${sourceId}`, { token: owner.token })).body, { timeout: 90_000 })
      .toMatchObject({ last_run: { status: 'succeeded' } });

    const { page } = await newPage(browser(), { viewport: PHONE });
    await openSources(page, owner, `/app/c/${id}/sources`);
    await card(page, ARTICLE).waitFor();
    await page.getByRole('form', { name: 'Add a source' }).getByText('Advanced').click();
    await page.waitForLoadState('networkidle');
    const [width, screen] = await pageAndScreenWidths(page);
    expect(width).toBeLessThanOrEqual(screen);
    await page.getByRole('button', { name: `Run history of ${ARTICLE}` }).click();
    await page.getByRole('dialog').getByRole('list', { name: 'Runs, newest first' }).waitFor();
    expect((await pageAndScreenWidths(page))[0]).toBeLessThanOrEqual(screen);
    await page.context().close();

    const found: Record<string, string[]> = {};
    for (const scheme of ['light', 'dark'] as const) {
      const { page: themed } = await newPage(browser(), { colorScheme: scheme });
      await openSources(themed, owner, `/app/c/${id}/sources`);
      const listed = card(themed, ARTICLE);
      await listed.waitFor();
      await themed.getByRole('form', { name: 'Add a source' }).getByText('Advanced').click();
      await listed.getByText('Pages it keeps').click();
      await listed.getByRole('list', { name: 'Pages' }).waitFor();
      await themed.waitForLoadState('networkidle');
      found[`${scheme} page`] = await seriousViolations(themed);
      await listed.getByRole('button', { name: `Run history of ${ARTICLE}` }).click();
      await themed.getByRole('dialog').getByRole('list', { name: 'Runs, newest first' }).waitFor();
      found[`${scheme} run history`] = await seriousViolations(themed);
      await themed.keyboard.press('Escape');
      await listed.getByRole('button', { name: `Delete source ${ARTICLE}` }).click();
      await themed.getByRole('dialog', { name: /^Delete the source/ }).waitFor();
      found[`${scheme} delete dialog`] = await seriousViolations(themed);
      await themed.keyboard.press('Escape');
      await themed.context().close();
    }
    expect(found).toEqual(Object.fromEntries(Object.keys(found).map((key) => [key, []])));
  });
});
