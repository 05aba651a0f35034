import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's Chromium (apt-get install chromium); never a downloaded browser. */
export const CHROMIUM = '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM);
// CI must run the browser tests, not skip them.
if (!chromiumAvailable && process.env.REQUIRE_CHROMIUM) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);

/** Headless, sandbox off (containers), and no background requests that would leave loopback. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/**
 * Every Content-Security-Policy violation a page reports, as Chromium logs it ("Refused to load…
 * because it violates…") and as the page's own `securitypolicyviolation` events name it, so that a
 * blocked script, style, image or request fails the test that loads it rather than passing unseen.
 */
export async function watchCspViolations(page: Page): Promise<string[]> {
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  await page.exposeFunction('__reportCspViolation', (violation: string) => violations.push(violation));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      const report = (window as unknown as { __reportCspViolation(violation: string): void }).__reportCspViolation;
      report(`${event.effectiveDirective} blocked ${event.blockedURI || 'inline'} at ${event.sourceFile}:${event.lineNumber}`);
    });
  });
  return violations;
}

/** Signs in through the login page of the app at `apiUrl` (the test users' password), then waits to be at `path`. */
export async function signInAt(page: Page, apiUrl: string, email: string, path: string) {
  await page.goto(`${apiUrl}/login?next=${encodeURIComponent(path)}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${apiUrl}${path}`);
}
