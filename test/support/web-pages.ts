import type { Browser, Locator, Page } from 'playwright-core';
import { watchCspViolations } from './browser.ts';
import { stack, type TestUser } from './client.ts';

// What the browser tests of the web app share. Apart from test/support/browser.ts, which
// web/screenshots.ts imports outside vitest, since these need the test stack.

/** What each page newPage() made reports, until takeCspViolations() collects it. */
const watched: string[][] = [];

/** Every CSP violation the pages reported since the last call, and a clean slate: checked after each test. */
export const takeCspViolations = (): string[] => watched.splice(0).flatMap((violations) => violations.splice(0));

/**
 * A fresh browser profile; every request it makes is recorded, to check that none leaves loopback, and
 * every Content-Security-Policy violation (takeCspViolations), to check that the app runs under its policy.
 */
export async function newPage(
  browser: Browser,
  viewport?: { width: number; height: number },
): Promise<{ page: Page; foreign: string[] }> {
  const context = await browser.newContext(viewport ? { viewport } : {});
  const page = await context.newPage();
  watched.push(await watchCspViolations(page));
  const foreign: string[] = [];
  page.on('request', (request) => {
    const { hostname, protocol } = new URL(request.url());
    if (protocol !== 'data:' && hostname !== '127.0.0.1' && hostname !== 'localhost') foreign.push(request.url());
  });
  return { page, foreign };
}

/** Signs in through the login page as a user made through the API, then opens `path`. */
export async function signInInBrowser(page: Page, user: TestUser, path: string) {
  await page.goto(`${stack.apiUrl}/login?next=${encodeURIComponent(path)}`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${stack.apiUrl}${path}`);
}

export const hasFocus = (locator: Locator) => locator.evaluate((element) => element === document.activeElement);

/** The page's scrolling width and the screen's: the first larger means something overflows sideways. */
export const pageAndScreenWidths = (page: Page): Promise<[number, number]> =>
  page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
