import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable } from '../support/browser.ts';
import { api, db, signUp, stack } from '../support/client.ts';
import { ingestFile } from '../support/ingest.ts';
import { browserForFile, hasFocus, newPage, PHONE, pageAndScreenWidths, signInInBrowser } from '../support/web-pages.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

// The web app's settings page in a real browser, against the API worker and the devstack: API keys
// made, shown once, used and revoked; webhooks registered, delivered to, paused, resumed and deleted.

const browser = browserForFile();

/** Where this file's webhooks go: an origin trusted for webhooks, answering 204. */
let receiver: WebhookReceiver | undefined;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  receiver = await startWebhookReceiver(stack.settingsReceiverUrl);
  receiver.answer('/hook', { status: 204 });
});
afterAll(() => receiver?.close());

/** A request with an API key, as a program would send it. */
async function withKey(key: string, path: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${stack.apiUrl}${path}`, { headers: { 'X-API-Key': key } });
  return { status: response.status, body: await response.json() };
}

// A browser, a worker and the queue share two cores with the rest of the suite: generous time per journey.
describe.skipIf(!chromiumAvailable)('the settings page in headless Chromium', { timeout: 90_000 }, () => {
  it('makes an API key limited to two scopes and a collection, shows it once, lists it without it, and revokes it', async () => {
    const user = await signUp('web-keys');
    const chosen = await api('POST', '/collections/', { token: user.token, body: { name: 'Key shelf' } });
    await api('POST', '/collections/', { token: user.token, body: { name: 'Other shelf' } });
    const { page, foreign } = await newPage(browser());
    await signInInBrowser(page, user, '/app/');
    await page.getByRole('link', { name: 'API keys & webhooks' }).click();
    await page.waitForURL(`${stack.apiUrl}/app/settings`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('API keys & webhooks');
    await expect.poll(() => page.textContent('main')).toContain('No keys yet');

    const form = page.getByRole('form', { name: 'New API key' });
    await form.getByLabel('Name').fill('nightly sync');
    // Without a scope nothing is sent, and the form says why.
    await form.getByRole('button', { name: 'Create key' }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toBe('Choose at least one scope.');
    expect((await api('GET', '/keys/', { token: user.token })).body).toEqual([]);

    await form.getByRole('checkbox', { name: /^query: ask questions/ }).check();
    await form.getByRole('checkbox', { name: /^collections:read: list collections/ }).check();
    await form.getByRole('combobox', { name: /^Collection/ }).selectOption({ label: 'Key shelf' });
    await form.getByLabel('Works until (optional)').fill('2099-12-31');
    await form.getByRole('button', { name: 'Create key' }).click();

    // Shown once, in a box that says so, with the focus on it and an example that uses it.
    const field = page.getByLabel('API key', { exact: true });
    await expect.poll(() => field.inputValue()).toMatch(/^rag_[A-Za-z0-9_-]{43}$/);
    const key = await field.inputValue();
    expect(await hasFocus(field)).toBe(true);
    const box = page.getByRole('region', { name: 'Your new key “nightly sync”' });
    expect(await box.textContent()).toContain('Copy it now: it will not be shown again.');
    const example = await box.locator('pre').textContent();
    expect(example).toMatch(new RegExp(`^curl -s ${stack.apiUrl}/query/search -H "X-API-Key: ${key}"`));
    expect(example).toContain(`"collection_id":"${chosen.body.id}"`);
    expect(await box.getByRole('button', { name: 'Copy the API key' }).count()).toBe(1);

    // The key works, within its scopes and its collection.
    const seen = await withKey(key, '/collections/');
    expect(seen.status).toBe(200);
    expect(seen.body.map((c: { name: string }) => c.name)).toEqual(['Key shelf']);
    expect((await withKey(key, '/ingest/jobs')).status).toBe(403);
    const [stored] = (await api('GET', '/keys/', { token: user.token })).body;
    expect(stored).toMatchObject({ name: 'nightly sync', scopes: ['query', 'collections:read'], collection_id: chosen.body.id });
    // The end of the chosen day, in the browser's time zone (the test's, on the same machine).
    expect(Date.parse(stored?.expires_at as string)).toBe(new Date('2099-12-31T23:59:59.999').getTime());

    // The list shows the key's prefix, never the key; after a reload the key itself is gone.
    const keys = page.getByRole('list', { name: 'API keys' });
    await expect.poll(() => keys.textContent()).toContain('nightly sync');
    await expect.poll(async () => (await api('GET', '/keys/', { token: user.token })).body[0]?.last_used_at).not.toBeNull();
    await page.reload();
    await expect.poll(() => keys.textContent()).toContain('nightly sync');
    const row = (await keys.getByRole('listitem').textContent()) as string;
    expect(row).toContain(`${key.slice(0, 12)}…`);
    expect(row).not.toContain(key);
    expect(row).toMatch(/querycollections:read/);
    expect(row).toContain('CollectionKey shelf');
    expect(row).toContain('2099');
    expect(row).toMatch(/Last used(just now|\d+ seconds ago)/);
    expect(row).toMatch(/Created(just now|\d+ seconds ago)/);
    expect(await page.textContent('main')).not.toContain(key);
    expect(await page.getByLabel('API key', { exact: true }).count()).toBe(0);

    // Revoking asks first, naming the key.
    await keys.getByRole('button', { name: 'Revoke key nightly sync' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).toMatch(/Revoke the key “nightly sync”\?.*rag_\S+….*cannot be undone/s);
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    expect((await withKey(key, '/collections/')).status).toBe(200);
    await keys.getByRole('button', { name: 'Revoke key nightly sync' }).click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await expect.poll(() => keys.getByRole('listitem').count()).toBe(0);
    expect(await page.textContent('main')).toContain('No keys yet');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('API keys');
    expect(await withKey(key, '/collections/')).toMatchObject({ status: 401, body: { code: 'api_key_revoked' } });
    expect(foreign).toEqual([]);
    await page.context().close();
  });

  it('registers a webhook, shows its secret once, shows a delivery, pauses, resumes, replaces its secret and deletes it', async () => {
    const user = await signUp('web-hooks');
    const { page, foreign } = await newPage(browser());
    await signInInBrowser(page, user, '/app/settings');
    const form = page.getByRole('form', { name: 'New webhook' });
    for (const event of ['ingest.succeeded', 'ingest.failed', 'ingest.partial']) {
      expect(await form.getByRole('checkbox', { name: new RegExp(`^${event.replace('.', '\\.')}:`) }).isChecked(), event).toBe(
        true,
      );
    }
    const url = `${stack.settingsReceiverUrl}/hook`;
    await form.getByLabel('URL').fill(url);
    await form.getByRole('button', { name: 'Register webhook' }).click();

    const field = page.getByLabel('Signing secret', { exact: true });
    await expect.poll(() => field.inputValue()).toMatch(/^whsec_/);
    const secret = await field.inputValue();
    expect(await hasFocus(field)).toBe(true);
    const box = page.getByRole('region', { name: `The signing secret for ${url}` });
    expect(await box.textContent()).toContain('Copy it now: it will not be shown again.');
    expect(await box.textContent()).toContain('webhook-signature: v1,<base64>');
    const hooks = page.getByRole('list', { name: 'Webhooks' });
    await expect.poll(() => hooks.textContent()).toContain(url);
    const row = (await hooks.getByRole('listitem').first().textContent()) as string;
    expect(row).toMatch(/ingest\.succeeded.*ingest\.failed.*ingest\.partial/);
    expect(row).toContain('Forall your uploads');
    expect(row).toContain('Stateactive');
    expect(row).not.toContain(secret);
    // The form is ready for another, every event checked again.
    expect(await form.getByLabel('URL').inputValue()).toBe('');

    // One of this user's uploads ends: the receiver (it answers 204) is told, and the disclosure shows it.
    const job = await ingestFile(user.token, 'tides.txt', undefined, 'Spring tides come at new and full moon. '.repeat(5));
    expect(job.status).toBe('succeeded');
    await hooks.locator('summary', { hasText: 'Deliveries' }).click();
    const deliveries = hooks.getByRole('list', { name: 'Deliveries' });
    const delivered = deliveries.locator('[data-status="delivered"]');
    await expect.poll(() => delivered.count(), { timeout: 30_000, interval: 250 }).toBe(1);
    const text = (await delivered.textContent()) as string;
    expect(text).toContain('Delivered');
    expect(text).toContain('ingest.succeeded');
    expect(text).toContain('Documenttides.txt');
    expect(text).toContain(`Job${job.job_id.slice(0, 8)}`);
    expect(text).toContain('Attempts1');
    expect(text).toContain('Last answerHTTP 204');

    await hooks.getByRole('button', { name: `Pause webhook ${url}` }).click();
    await expect.poll(() => hooks.getByRole('button', { name: `Resume webhook ${url}` }).count()).toBe(1);
    expect(await hooks.textContent()).toContain('Statepaused');
    expect((await api('GET', '/webhooks/', { token: user.token })).body[0]?.active).toBe(false);
    await hooks.getByRole('button', { name: `Resume webhook ${url}` }).click();
    await expect.poll(() => hooks.getByRole('button', { name: `Pause webhook ${url}` }).count()).toBe(1);
    expect((await api('GET', '/webhooks/', { token: user.token })).body[0]?.active).toBe(true);

    // A new secret, after a warning: shown once, in the same box, and the only one that signs now.
    await hooks.getByRole('button', { name: `New secret for webhook ${url}` }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).toMatch(/Replace the signing secret\?.*The current secret signs nothing more/s);
    await dialog.getByRole('button', { name: 'Replace secret' }).click();
    await expect.poll(() => field.inputValue()).not.toBe(secret);
    const replaced = await field.inputValue();
    expect(replaced).toMatch(/^whsec_/);
    expect(await hasFocus(field)).toBe(true);
    const [stored] = await db()<{ secret: string }[]>`select secret from webhooks where user_id = ${user.id}`;
    expect(stored?.secret).toBe(replaced);
    expect(await hooks.textContent()).not.toContain(replaced);

    await hooks.getByRole('button', { name: `Delete webhook ${url}` }).click();
    expect(await dialog.textContent()).toMatch(/Delete this webhook\?.*\/hook gets no more deliveries/s);
    await dialog.getByRole('button', { name: 'Delete webhook' }).click();
    await expect.poll(() => hooks.getByRole('listitem').count()).toBe(0);
    expect(await page.textContent('main')).toContain('No webhooks yet');
    expect((await api('GET', '/webhooks/', { token: user.token })).body).toEqual([]);
    expect(foreign).toEqual([]);
    await page.context().close();
  });

  it('says beside the field why a webhook URL is refused, and registers nothing', async () => {
    const user = await signUp('web-hook-refused');
    const { page } = await newPage(browser());
    await signInInBrowser(page, user, '/app/settings');
    const form = page.getByRole('form', { name: 'New webhook' });
    const field = form.getByLabel('URL');
    await field.fill('http://10.0.0.1/x');
    await form.getByRole('button', { name: 'Register webhook' }).click();
    await expect.poll(() => field.getAttribute('aria-invalid')).toBe('true');
    const [reason] = ((await field.getAttribute('aria-describedby')) as string).split(' ');
    expect(await page.locator(`#${reason}`).textContent()).toBe('The URL points to a private or reserved address');
    expect(await hasFocus(field)).toBe(true);
    expect(await field.inputValue()).toBe('http://10.0.0.1/x');
    expect((await api('GET', '/webhooks/', { token: user.token })).body).toEqual([]);
    await page.context().close();
  });

  it('holds its layout on a 360-pixel phone: nothing wider than the screen', async () => {
    const user = await signUp('web-settings-phone');
    const created = await api('POST', '/collections/', {
      token: user.token,
      body: { name: 'A collection with a long name to wrap on a small screen' },
    });
    const restricted = { name: 'A key with a rather long name, to wrap', scopes: ['query', 'ingest', 'collections:read'] };
    await api('POST', '/keys/', { token: user.token, body: { ...restricted, collection_id: created.body.id } });
    const hook = await api('POST', '/webhooks/', {
      token: user.token,
      body: {
        url: `${stack.settingsReceiverUrl}/hook?receiver=${'a-long-query-string-without-spaces-'.repeat(3)}`,
        events: ['ingest.succeeded', 'ingest.failed', 'ingest.partial'],
        collection_id: created.body.id,
      },
    });
    expect(hook.status).toBe(200);
    expect(
      (await ingestFile(user.token, 'tides.txt', created.body.id, 'Neap tides come at the quarter moons. '.repeat(5))).status,
    ).toBe('succeeded');

    const { page } = await newPage(browser(), { viewport: PHONE });
    await signInInBrowser(page, user, '/app/settings');
    // A new key's box, with its long example command, and a webhook's deliveries, open.
    const form = page.getByRole('form', { name: 'New API key' });
    await form.getByLabel('Name').fill('phone');
    await form.getByRole('checkbox', { name: /^ingest:/ }).check();
    await form.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('API key', { exact: true }).waitFor();
    await page.locator('summary', { hasText: 'Deliveries' }).click();
    await page.getByRole('list', { name: 'Deliveries' }).waitFor();
    await page.waitForLoadState('networkidle');
    const [width, screen] = await pageAndScreenWidths(page);
    expect(width).toBeLessThanOrEqual(screen);
    await page.context().close();
  });
});
