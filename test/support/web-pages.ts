import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContextOptions, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { chromiumAvailable, launchChromium, signInAt, watchCspViolations } from '../../devstack/harness/browser.ts';
import { stack, type TestUser } from './client.ts';

// What the browser tests of the web app share. Apart from devstack/harness/browser.ts, which
// web/screenshots.ts imports outside vitest, since these need the test stack.

/** What each page newPage() made reports, until takeCspViolations() collects it. */
const watched: string[][] = [];

/**
 * One Chromium for a test file's tests, closed after them, with every page's Content-Security-Policy violations
 * checked after each test: `const browser = browserForFile();`, then `newPage(browser())`.
 */
export function browserForFile(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    if (chromiumAvailable) browser = await launchChromium();
  });
  afterAll(() => browser?.close());
  afterEach(() => expect(takeCspViolations()).toEqual([]));
  return () => {
    if (!browser) throw new Error('Chromium is not running');
    return browser;
  };
}

/** Every CSP violation the pages reported since the last call, and a clean slate: checked after each test. */
export const takeCspViolations = (): string[] => watched.splice(0).flatMap((violations) => violations.splice(0));

/**
 * A fresh browser profile; every request it makes is recorded, to check that none leaves loopback, and
 * every Content-Security-Policy violation (takeCspViolations), to check that the app runs under its policy.
 */
export async function newPage(
  browser: Browser,
  options: Pick<BrowserContextOptions, 'viewport' | 'colorScheme' | 'reducedMotion'> = {},
): Promise<{ page: Page; foreign: string[] }> {
  const context = await browser.newContext(options);
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
export const signInInBrowser = (page: Page, user: TestUser, path: string) => signInAt(page, stack.apiUrl, user.email, path);

export const hasFocus = (locator: Locator) => locator.evaluate((element) => element === document.activeElement);

/** The page's scrolling width and the screen's: the first larger means something overflows sideways. */
export const pageAndScreenWidths = (page: Page): Promise<[number, number]> =>
  page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
let axeSource: string | undefined;

/** axe-core's serious and critical findings on the page as it stands: each rule with the elements it names. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern: a <script> tag
  // with axe inline would be refused, as it should be.
  axeSource ??= readFileSync(AXE, 'utf8');
  await page.evaluate(axeSource);
  const found = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> };
      }
    ).axe;
    const { violations } = await axe.run();
    return violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.targets.join(', ')}`);
}

/** The narrowest phone the app is made for. */
export const PHONE = { width: 360, height: 780 };
