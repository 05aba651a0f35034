import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable } from '../support/browser.ts';
import { api, signUp, stack, type TestUser } from '../support/client.ts';
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

// The app for everyone: axe-core on every page in both themes, dark mode, the phone's drawer, the keyboard.

const browser = browserForFile();
let user: TestUser;
let collection: string;
let chat: string;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  user = await signUp('web-comfort');
  collection = (await api('POST', '/collections/', { token: user.token, body: { name: 'Tides' } })).body.id;
  const text = 'The barrage at La Rance in Brittany has produced tidal power since 1966. '.repeat(4);
  expect((await ingestFile(user.token, 'rance.txt', collection, text)).status).toBe('succeeded');
  chat = (await api('POST', `/chat/${collection}/sessions`, { token: user.token, body: { title: 'About La Rance' } })).body.id;
  const asked = await fetch(`${stack.apiUrl}/query/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${user.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      question: 'Since when has La Rance produced tidal power?',
      collection_id: collection,
      session_id: chat,
    }),
  });
  expect(await asked.text()).toContain('event: done');
});

const sidebar = (page: Page) => page.getByRole('navigation', { name: 'Collections and chats' });

describe.skipIf(!chromiumAvailable)('comfort and access in headless Chromium', { timeout: 180_000 }, () => {
  it('has no serious or critical axe-core violation on any page, light or dark', async () => {
    const pages = [
      '/app/',
      `/app/c/${collection}`,
      `/app/c/${collection}/chat/${chat}`,
      `/app/c/${collection}/documents`,
      `/app/c/${collection}/sharing`,
      `/app/c/${collection}/quality`,
      `/app/c/${collection}/settings`,
      '/app/personal',
      '/app/personal/documents',
      '/app/collections',
      '/app/settings',
    ];
    const found: Record<string, string[]> = {};
    for (const scheme of ['light', 'dark'] as const) {
      const { page } = await newPage(browser(), { colorScheme: scheme });
      await page.goto(`${stack.apiUrl}/login`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      found[`${scheme} /login`] = await seriousViolations(page);
      await signInInBrowser(page, user, '/app/');
      for (const path of pages) {
        await page.goto(`${stack.apiUrl}${path}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await page.waitForLoadState('networkidle');
        found[`${scheme} ${path}`] = await seriousViolations(page);
      }
      // The chat with its source panel open.
      await page.goto(`${stack.apiUrl}/app/c/${collection}/chat/${chat}`);
      await page
        .getByRole('button', { name: /^Source 1:/ })
        .first()
        .click();
      await page.locator('mark.cited-passage').waitFor();
      found[`${scheme} source panel`] = await seriousViolations(page);
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(scheme);
      await page.context().close();
    }
    expect(Object.entries(found).filter(([, violations]) => violations.length > 0)).toEqual([]);
  });

  it('follows the system theme, and the switch overrides it for this browser', async () => {
    const { page } = await newPage(browser(), { colorScheme: 'dark' });
    await signInInBrowser(page, user, '/app/');
    const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
    const background = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    expect(await theme()).toBe('dark');
    expect(await background()).toBe('rgb(15, 20, 25)');
    await page.getByLabel('Colour theme').selectOption('light');
    expect(await theme()).toBe('light');
    expect(await background()).toBe('rgb(247, 248, 250)');
    await page.reload();
    await page.getByRole('heading', { level: 1 }).waitFor();
    expect(await theme()).toBe('light');
    await page.getByLabel('Colour theme').selectOption('system');
    expect(await theme()).toBe('dark');
    await page.context().close();
  });

  it('puts the sidebar in a drawer on a phone, and nothing is wider than the screen', async () => {
    const { page } = await newPage(browser(), { viewport: PHONE });
    await signInInBrowser(page, user, `/app/c/${collection}`);
    const menu = page.getByRole('button', { name: 'Collections and chats' });
    expect(await sidebar(page).isVisible()).toBe(false);
    expect(await menu.getAttribute('aria-expanded')).toBe('false');

    await menu.click();
    await expect.poll(() => sidebar(page).isVisible()).toBe(true);
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    // The focus moves into the drawer; Esc closes it and returns the focus to the menu button.
    expect(await sidebar(page).evaluate((nav) => nav.contains(document.activeElement))).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => sidebar(page).isVisible()).toBe(false);
    expect(await hasFocus(menu)).toBe(true);

    // Choosing a chat in the drawer opens it, and closes the drawer.
    await menu.click();
    await sidebar(page).getByRole('link', { name: 'About La Rance' }).click();
    await page.waitForURL(`${stack.apiUrl}/app/c/${collection}/chat/${chat}`);
    await expect.poll(() => sidebar(page).isVisible()).toBe(false);
    await expect.poll(() => page.getByRole('list', { name: 'Messages' }).textContent()).toContain('1966');
    const [width, screen] = await pageAndScreenWidths(page);
    expect(width).toBeLessThanOrEqual(screen);
    // The drawer slides; for a reader who asked for less motion, it appears.
    const slide = () => page.locator('#sidebar').evaluate((nav) => getComputedStyle(nav).transitionDuration);
    expect(await slide()).toMatch(/0\.2s/);
    await page.emulateMedia({ reducedMotion: 'reduce' });
    expect(await slide()).toMatch(/^0s(, 0s)*$/);
    await page.context().close();
  });

  it('takes keyboard shortcuts: / focuses the question, Ctrl+Shift+O starts a new chat', async () => {
    const { page } = await newPage(browser());
    await signInInBrowser(page, user, `/app/c/${collection}/chat/${chat}`);
    await expect
      .poll(() => page.getByRole('list', { name: 'Messages' }).locator('.answer').first().textContent())
      .toContain('1966');
    await page.locator('body').click({ position: { x: 5, y: 400 } });
    await page.keyboard.press('/');
    expect(await hasFocus(page.getByLabel('Your question'))).toBe(true);
    await page.keyboard.press('Control+Shift+O');
    await page.waitForURL(`${stack.apiUrl}/app/c/${collection}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('New chat');
    await page.context().close();
  });
});
