import { describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium, watchCspViolations } from '../support/browser.ts';
import { stack } from '../support/client.ts';

describe.skipIf(!chromiumAvailable)('the /docs page in headless Chromium', () => {
  it('renders the reference with the endpoints, loading nothing from outside, under its CSP', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const violations = await watchCspViolations(page);
      const foreign: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith(stack.apiUrl) && !request.url().startsWith('data:')) foreign.push(request.url());
      });
      await page.goto(`${stack.apiUrl}/docs`);
      await page.waitForSelector('.opblock-summary-path', { timeout: 20_000 });
      const paths = await page.$$eval('.opblock-summary-path', (nodes) => nodes.map((node) => node.textContent?.trim()));
      expect(paths).toContain('/collections/{id}/shares');
      expect(paths).toContain('/chat/{collection_id}/sessions/{session_id}/share');
      expect(await page.textContent('body')).toContain('Authorize');

      // An operation opened and tried: its request goes to this origin, which the policy allows.
      await page.locator('.opblock-summary-path', { hasText: /^\/health$/ }).click();
      await page.getByRole('button', { name: 'Try it out' }).click();
      await page.getByRole('button', { name: 'Execute' }).click();
      await expect
        .poll(() => page.locator('.live-responses-table tbody .response-col_status').first().textContent())
        .toContain('200');

      expect(foreign).toEqual([]);
      expect(violations).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it('forgets an API key pasted into Authorize when the page is left: nothing is kept in storage', async () => {
    const browser = await launchChromium();
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${stack.apiUrl}/docs`);
      await page.getByRole('button', { name: 'Authorize' }).first().click();
      const form = page.locator('.auth-container', { has: page.locator('#api_key_value') });
      await form.locator('#api_key_value').fill('rag_pasted-into-the-docs-page-and-never-kept-00000');
      await form.getByRole('button', { name: 'Apply credentials' }).click();
      // Authorized: the key's field gives way to a button that removes it.
      await page.getByRole('button', { name: 'Remove authorization' }).waitFor();

      const stored = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }));
      expect(stored).not.toContain('rag_pasted');
      expect(stored).not.toContain('authorized');
      const cookies = await context.cookies();
      expect(JSON.stringify(cookies)).not.toContain('rag_pasted');

      // A new visit starts signed out.
      await page.reload();
      await page.getByRole('button', { name: 'Authorize' }).first().click();
      await page.locator('#api_key_value').waitFor();
      expect(await page.getByRole('button', { name: 'Remove authorization' }).count()).toBe(0);
    } finally {
      await browser.close();
    }
  });
});
