import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable } from '../support/browser.ts';
import { api, db, makeAdmin, type Schema, signUp, stack, type TestUser } from '../support/client.ts';
import { ingestFile, queuedUrlJob, waitForJob } from '../support/ingest.ts';
import { browserForFile, newPage, PHONE, pageAndScreenWidths, seriousViolations, signInInBrowser } from '../support/web-pages.ts';

// The usage and admin pages in a real browser, against the workers and the devstack: a user uploads a file and asks
// a question, and their usage page draws those days' tokens and shows the totals GET /usage answers; an administrator's
// admin page shows the deployment's counts, that user among the users, a stuck job (one whose messages were lost,
// made as test/api/sweep.test.ts makes one) retried with its button and then finished, and the retry in the audit
// log; a user who is no administrator is told the page is not theirs, and the API refuses them; axe-core in both themes.

const browser = browserForFile();
const ARTICLE = `${stack.pagesUrl}/article.html`;
const figure = (n: number) => n.toLocaleString('en-US');

type Usage = Schema<'Usage'>;

let user: TestUser;
let admin: TestUser;

async function usageOf(token: string, groupBy = 'model'): Promise<Usage> {
  const response = await api('GET', `/usage?group_by=${groupBy}`, { token });
  expect(response.status).toBe(200);
  return response.body as Usage;
}

/**
 * The user's usage once it has stopped moving: an answer's is written after its done event, and its scoring's
 * judge calls later still, in the background. Two reads 1.5 s apart that agree, with the scoring among them.
 */
async function settledUsage(token: string): Promise<Usage> {
  let last = '';
  const deadline = Date.now() + 60_000;
  for (;;) {
    const usage = await usageOf(token);
    const now = JSON.stringify(usage.totals);
    if (now === last && usage.totals.output_tokens > 0) return usage;
    if (Date.now() > deadline) throw new Error(`usage kept moving: ${now}`);
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
  }
}

const total = (page: Page, name: string) => page.locator(`[data-total="${name}"] dd`).textContent();

beforeAll(async () => {
  user = await signUp('web-usage');
  admin = await makeAdmin(await signUp('web-admin'));
  const created = await api('POST', '/collections/', { token: user.token, body: { name: 'Tides measured' } });
  expect(created.status).toBe(200);
  const id = created.body.id as string;
  const text = 'The barrage at La Rance in Brittany has produced tidal power since 1966. '.repeat(4);
  expect((await ingestFile(user.token, 'rance.txt', id, text)).status).toBe('succeeded');
  const asked = await fetch(`${stack.apiUrl}/query/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${user.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ question: 'Since when has La Rance produced tidal power?', collection_id: id }),
  });
  expect(await asked.text()).toContain('event: done');
});

describe.skipIf(!chromiumAvailable)('the usage and admin pages in headless Chromium', { timeout: 180_000 }, () => {
  it('draws the user’s tokens per day and shows the totals and breakdown GET /usage answers', async () => {
    const usage = await settledUsage(user.token);
    const { page, foreign } = await newPage(browser());
    // A chunk of its own, fetched when the page is first opened.
    const chunks: string[] = [];
    page.on('request', (request) => {
      if (/\/assets\/UsagePage-[\w-]+\.js$/.test(request.url())) chunks.push(request.url());
    });
    await signInInBrowser(page, user, '/app/settings');
    await page.getByRole('heading', { level: 1, name: 'API keys & webhooks' }).waitFor();
    expect(chunks).toEqual([]);
    // The way in: the sidebar's link, for every user; the admin page's only for administrators.
    const sidebar = page.getByRole('navigation', { name: 'Collections and chats' });
    expect(await sidebar.getByRole('link', { name: 'Administration' }).count()).toBe(0);
    await sidebar.getByRole('link', { name: 'Usage', exact: true }).click();
    await page.waitForURL('**/app/usage');
    await page.getByRole('heading', { level: 1, name: 'Usage' }).waitFor();
    expect(chunks).toHaveLength(1);

    // The totals, as the API counts them.
    await expect.poll(() => total(page, 'input_tokens')).toBe(figure(usage.totals.input_tokens));
    expect(await total(page, 'output_tokens')).toBe(figure(usage.totals.output_tokens));
    expect(await total(page, 'calls')).toBe(figure(usage.totals.calls));
    expect(await page.locator('[data-total="cost_usd"]').count()).toBe(usage.priced ? 1 : 0);
    expect(await page.locator('[data-total="daily_token_cap"]').count()).toBe(usage.daily_token_cap === null ? 0 : 1);

    // The chart: 30 days, today's bar drawn, its text alternative naming the whole.
    const today = new Date().toISOString().slice(0, 10);
    const chart = page.getByRole('img', { name: /^Input and output tokens per UTC day/ });
    expect(await chart.getAttribute('aria-label')).toContain(
      `${figure(usage.totals.input_tokens + usage.totals.output_tokens)} in all`,
    );
    expect(await chart.locator('g[data-date]').count()).toBe(30);
    expect(await chart.locator(`g[data-date="${today}"] rect.input`).count()).toBe(1);
    expect(await chart.locator(`g[data-date="${today}"] rect.output`).count()).toBe(1);
    // The same figures as a table.
    await page.getByText('The figures, day by day').click();
    const days = page.locator('table.figures-table tbody tr');
    expect(await days.count()).toBe(usage.rows.map((row) => row.date).filter((d, i, all) => all.indexOf(d) === i).length);
    expect(await days.last().locator('th').textContent()).toBe(today);

    // The breakdown by model, then by collection: one row a group, the totals below.
    const breakdown = page.locator('table.breakdown');
    const models = usage.rows.map((row) => row.group).filter((g, i, all) => all.indexOf(g) === i);
    expect(await breakdown.locator('tbody tr').count()).toBe(models.length);
    expect(await breakdown.locator('tfoot td').nth(1).textContent()).toBe(figure(usage.totals.input_tokens));
    await page.getByLabel('Break down by').selectOption('collection');
    await page.getByRole('heading', { name: 'By collection' }).waitFor();
    await expect.poll(() => breakdown.locator('tbody th').allTextContents()).toContain('Tides measured');
    // No user breakdown for a user: it would be themselves alone.
    expect(await page.getByLabel('Break down by').locator('option[value="user"]').count()).toBe(0);

    // A week: the chart has seven days.
    await page.getByLabel('Period').selectOption('7');
    await expect.poll(() => chart.locator('g[data-date]').count()).toBe(7);
    expect(foreign).toEqual([]);
    await page.context().close();
  });

  it('tells a user who is no administrator that the admin page is not theirs, and the API refuses them', async () => {
    const { page } = await newPage(browser());
    await signInInBrowser(page, user, '/app/admin');
    await page.getByRole('heading', { level: 1, name: 'Administrators only' }).waitFor();
    expect(await page.textContent('main')).toContain('your account is not one of them');
    for (const path of ['/admin/overview', '/admin/users', '/admin/jobs?state=stuck'] as const) {
      expect((await api('GET', path, { token: user.token })).status).toBe(403);
    }
    await page.context().close();
  });

  it('shows an administrator the counts, the users, a stuck job retried with its button, and the audit log', async () => {
    // A job whose message was lost 20 minutes ago: stuck (15) but not yet the sweep's (60).
    const { jobId } = await queuedUrlJob(user.id, ARTICLE);
    await db()`update ingest_jobs set updated_at = now() - interval '20 minutes' where id = ${jobId}`;

    const { page, foreign } = await newPage(browser());
    await signInInBrowser(page, admin, '/app/usage');
    // An administrator's GET /usage is everyone's, and the page says so.
    await page.getByRole('heading', { level: 1, name: 'Everyone’s usage' }).waitFor();
    await page.getByLabel('Break down by').selectOption('user');
    await page.getByRole('heading', { name: 'By user' }).waitFor();
    await expect.poll(() => page.locator(`table.breakdown tr[data-group="${user.id}"] th`).textContent()).toBe(user.email);

    await page.getByRole('navigation', { name: 'Collections and chats' }).getByRole('link', { name: 'Administration' }).click();
    await page.waitForURL('**/app/admin');
    await page.getByRole('heading', { level: 1, name: 'Administration' }).waitFor();

    // The counts.
    const overview = await api('GET', '/admin/overview', { token: admin.token });
    expect(overview.status).toBe(200);
    const counts = page.getByRole('definition');
    await counts.first().waitFor();
    expect(Number((await page.locator('[data-figure="users"] dd').textContent())?.replace(/,/g, ''))).toBeGreaterThanOrEqual(2);
    expect(Number(await page.locator('[data-figure="stuck"] dd').textContent())).toBeGreaterThanOrEqual(1);
    const dead = page.locator('[data-figure="dead_letters"] dd');
    if (overview.body.dead_letters === null) expect(await dead.textContent()).toBe('Unknown');
    else expect(await dead.textContent()).toMatch(/^\d[\d,]*\+?$/);

    // The users, the most tokens first, a page at a time: the user is on one of them, with their usage.
    const row = page.locator(`table.users tr[data-user="${user.id}"]`);
    for (let pages = 0; (await row.count()) === 0 && pages < 20; pages++) {
      await page.locator('table.users tbody tr').first().waitFor();
      if (await row.count()) break;
      await page.getByRole('navigation', { name: 'Pages of users' }).getByRole('button', { name: 'Next' }).click();
    }
    await row.waitFor();
    const named = await row.locator('th').textContent();
    expect(named?.startsWith(`${user.email}joined `)).toBe(true);
    expect(named).toMatch(/; (signed in|never signed in)/);
    const usage = await usageOf(user.token);
    expect(await row.locator('td.num').nth(3).textContent()).toBe(figure(usage.totals.input_tokens));

    // The stuck job, retried: queued again, and the ingest worker finishes it.
    const jobs = page.getByRole('tabpanel');
    expect(await page.getByRole('tab', { name: 'Stuck' }).getAttribute('aria-selected')).toBe('true');
    const card = jobs.locator(`li[data-job="${jobId}"]`);
    await card.waitFor();
    expect(await card.textContent()).toContain(user.email);
    await card.getByRole('button', { name: `Retry ${ARTICLE}` }).click();
    const notice = page.locator('.admin p.notice[role="status"]');
    await expect.poll(() => notice.textContent()).toBe(`Queued again: ${ARTICLE} goes on from where it stopped (job ${jobId}).`);
    expect((await waitForJob(user.token, jobId)).status).toBe('succeeded');
    // The failed tab, by keyboard: the arrow moves to it.
    await page.getByRole('tab', { name: 'Stuck' }).focus();
    await page.keyboard.press('ArrowRight');
    expect(await page.getByRole('tab', { name: 'Failed' }).getAttribute('aria-selected')).toBe('true');
    // Its list, or that there is none; the stuck job is not among them.
    const failed = page.getByRole('list', { name: 'Failed jobs' });
    await expect.poll(async () => (await failed.count()) + (await jobs.getByText('No failed jobs.').count())).toBe(1);
    expect(await jobs.locator(`li[data-job="${jobId}"]`).count()).toBe(0);

    // The audit log: the retry, by the administrator, among the latest of its action.
    await page.getByLabel('Action').selectOption('job.retried');
    const entry = page.locator('table.audit tr[data-action="job.retried"]').filter({ hasText: jobId.slice(0, 8) });
    await entry.waitFor();
    expect(await entry.locator('td').nth(1).textContent()).toBe('You');
    const latest = await api('GET', '/audit?action=job.retried&limit=20', { token: admin.token });
    expect(latest.body.some((e) => e.target_id === jobId)).toBe(true);
    expect(foreign).toEqual([]);
    await page.context().close();
  });

  it('fits a 360-pixel phone and has no serious axe-core violation, light or dark', async () => {
    const { page } = await newPage(browser(), { viewport: PHONE });
    await signInInBrowser(page, admin, '/app/admin');
    await page.locator('table.users tbody tr').first().waitFor();
    await page.waitForLoadState('networkidle');
    const [width, screen] = await pageAndScreenWidths(page);
    expect(width).toBeLessThanOrEqual(screen);
    await page.goto(`${stack.apiUrl}/app/usage`);
    await page.locator('table.breakdown').waitFor();
    expect((await pageAndScreenWidths(page))[0]).toBeLessThanOrEqual(screen);
    await page.context().close();

    const found: Record<string, string[]> = {};
    for (const scheme of ['light', 'dark'] as const) {
      const { page: themed } = await newPage(browser(), { colorScheme: scheme });
      await signInInBrowser(themed, user, '/app/usage');
      await themed.locator('table.breakdown').waitFor();
      await themed.getByText('The figures, day by day').click();
      await themed.waitForLoadState('networkidle');
      found[`${scheme} usage`] = await seriousViolations(themed);
      await themed.goto(`${stack.apiUrl}/app/admin`);
      await themed.getByRole('heading', { level: 1, name: 'Administrators only' }).waitFor();
      found[`${scheme} refusal`] = await seriousViolations(themed);
      await themed.context().close();

      const { page: admins } = await newPage(browser(), { colorScheme: scheme });
      await signInInBrowser(admins, admin, '/app/admin');
      await admins.locator('table.users tbody tr').first().waitFor();
      await admins.locator('table.audit tbody tr').first().waitFor();
      await admins.waitForLoadState('networkidle');
      found[`${scheme} admin`] = await seriousViolations(admins);
      await admins.getByRole('tab', { name: 'Failed' }).click();
      await admins.waitForLoadState('networkidle');
      found[`${scheme} admin, failed jobs`] = await seriousViolations(admins);
      await admins.context().close();
    }
    expect(found).toEqual(Object.fromEntries(Object.keys(found).map((key) => [key, []])));
  });
});
