import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

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
