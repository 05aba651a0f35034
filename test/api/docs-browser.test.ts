import { describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from '../support/browser.ts';
import { stack } from '../support/client.ts';

describe.skipIf(!chromiumAvailable)('the /docs page in headless Chromium', () => {
  it('renders the reference with the endpoints, loading nothing from outside', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
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
      expect(foreign).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
