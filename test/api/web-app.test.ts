import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { chromiumAvailable } from '../support/browser.ts';
import { api, db, makeAdmin, signUp, stack } from '../support/client.ts';
import { collectionWithLink } from '../support/fixtures.ts';
import { ingestFile } from '../support/ingest.ts';
import { browserForFile, newPage, PHONE, pageAndScreenWidths, signInInBrowser } from '../support/web-pages.ts';

// The web app in a real browser, against the API worker and the devstack: sign-in and collections.

const browser = browserForFile();

const PASSWORD = 'a long enough password';

async function signUpInBrowser(page: Page, email: string) {
  await page.getByRole('button', { name: 'Create one' }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
}

/** The access token supabase-js keeps for the page's session, to call the API as the same person. */
function accessTokenIn(page: Page): Promise<string> {
  return page.evaluate(() => {
    const key = Object.keys(localStorage).find((k) => k.startsWith('sb-') && k.endsWith('-auth-token')) as string;
    return JSON.parse(localStorage.getItem(key) as string).access_token as string;
  });
}

// A browser, a worker and the queue share two cores with the rest of the suite: generous time per journey.
describe.skipIf(!chromiumAvailable)('the web app in headless Chromium', { timeout: 90_000 }, () => {
  it('sends a visitor without a session to /login, and back to the page asked for after signing up', async () => {
    const { page, foreign } = await newPage(browser());
    await page.goto(`${stack.apiUrl}/app/`);
    await page.waitForURL(`${stack.apiUrl}/login?next=%2Fapp%2F`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');

    const email = `web-${randomUUID().slice(0, 8)}@example.com`;
    await signUpInBrowser(page, email);
    await page.waitForURL(`${stack.apiUrl}/app/`);
    // The app opens on a new chat.
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('New chat');
    expect(await page.textContent('header')).toContain(email);
    expect(foreign).toEqual([]);
    await page.context().close();
  });

  it('signs in with the keyboard alone, and out again', async () => {
    const user = await signUp('web-keyboard');
    const { page } = await newPage(browser());
    await page.goto(`${stack.apiUrl}/login`);
    await page.getByLabel('Email').waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.type(user.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type('wrong password');
    await page.keyboard.press('Enter');
    // Supabase Auth's answer, in words.
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/invalid/i);

    await page.getByLabel('Password').fill('');
    await page.getByLabel('Password').focus();
    await page.keyboard.type('correct horse battery');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${stack.apiUrl}/app/`);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${stack.apiUrl}/login`);
    await page.goto(`${stack.apiUrl}/app/`);
    await page.waitForURL(/\/login\?next=/);
    await page.context().close();
  });

  it('lists owned and shared collections with the permission, creates one, and deletes one after saying what is lost', async () => {
    const owner = await signUp('web-owner');
    const { page, foreign } = await newPage(browser());
    const email = `web-${randomUUID().slice(0, 8)}@example.com`;
    await page.goto(`${stack.apiUrl}/login`);
    await signUpInBrowser(page, email);
    await page.waitForURL(`${stack.apiUrl}/app/`);
    await page.getByRole('link', { name: 'Manage collections' }).click();
    await page.waitForURL(`${stack.apiUrl}/app/collections`);
    await expect.poll(() => page.textContent('main')).toContain('No collections yet');

    // Someone else's collection, shared with this user for questions.
    const shared = await collectionWithLink(owner, 'Their papers', 'query');
    const token = await accessTokenIn(page);
    expect((await api('POST', `/collections/join/${shared.link.share_token}`, { token })).status).toBe(200);

    await page.getByLabel('New collection').fill('My notes');
    await page.getByRole('button', { name: 'Create' }).click();
    const list = page.getByRole('list', { name: 'Your collections' });
    await expect.poll(() => list.textContent()).toContain('My notes');
    await page.reload();
    await expect.poll(() => list.textContent()).toContain('Their papers');
    const items = await list.getByRole('listitem').allTextContents();
    expect(items.find((text) => text.includes('My notes'))).toContain('owner');
    expect(items.find((text) => text.includes('Their papers'))).toContain('shared with you · query');
    // Only the owner may delete: no button on the shared one.
    expect(await page.getByRole('button', { name: 'Delete Their papers' }).count()).toBe(0);

    await page.getByRole('button', { name: 'Delete My notes' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).toMatch(/Delete “My notes”\?.*documents.*chat sessions.*cannot be undone/s);
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    expect(await list.textContent()).toContain('My notes');
    await page.getByRole('button', { name: 'Delete My notes' }).click();
    await dialog.getByRole('button', { name: 'Delete collection' }).click();
    await expect.poll(() => list.textContent()).not.toContain('My notes');
    // The sidebar follows the list.
    await expect
      .poll(() => page.getByRole('navigation', { name: 'Collections and chats' }).textContent())
      .not.toContain('My notes');
    const remaining = await api('GET', '/collections/', { token });
    expect(remaining.body.map((c: { name: string }) => c.name)).toEqual(['Their papers']);

    expect(foreign).toEqual([]);
    await page.context().close();
  });

  it('refreshes an access token the API refuses, once, and carries on', async () => {
    const { page } = await newPage(browser());
    await page.goto(`${stack.apiUrl}/login`);
    await signUpInBrowser(page, `web-${randomUUID().slice(0, 8)}@example.com`);
    await page.waitForURL(`${stack.apiUrl}/app/`);
    await page.goto(`${stack.apiUrl}/app/collections`);
    await expect.poll(() => page.textContent('main')).toContain('No collections yet');
    // The stored token goes bad while it still looks fresh, as a revoked or mis-signed one would.
    await page.evaluate(() => {
      const key = Object.keys(localStorage).find((k) => k.startsWith('sb-') && k.endsWith('-auth-token')) as string;
      const session = JSON.parse(localStorage.getItem(key) as string);
      localStorage.setItem(key, JSON.stringify({ ...session, access_token: `${session.access_token}x` }));
    });
    const statuses: number[] = [];
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === '/collections' && response.request().method() === 'GET')
        statuses.push(response.status());
    });
    await page.reload();
    // The list loads: refused once, then answered with the refreshed token.
    await expect.poll(() => page.textContent('main')).toContain('No collections yet');
    await page.getByLabel('New collection').fill('After refresh');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => page.getByRole('list', { name: 'Your collections' }).textContent()).toContain('After refresh');
    expect(statuses[0]).toBe(401);
    expect(statuses.slice(1).every((status) => status === 200)).toBe(true);
    expect(page.url()).toBe(`${stack.apiUrl}/app/collections`);
    await page.context().close();
  });

  it('shows the picture of a scanned page when its citation is opened', async () => {
    const user = await signUp('web-scan');
    const created = await api('POST', '/collections/', { token: user.token, body: { name: 'Scans' } });
    const job = await ingestFile(user.token, 'scan-linn-2col.pdf', created.body.id);
    expect(job.status).toBe('succeeded');
    const { page } = await newPage(browser());
    await signInInBrowser(page, user, `/app/c/${created.body.id}`);
    await page.getByLabel('Your question').fill('What is the LinnSequencer MIDI sequence recorder?');
    await page.getByRole('button', { name: 'Ask' }).click();
    const cite = page
      .getByRole('list', { name: 'Messages' })
      .getByRole('button', { name: /^Source \d+: scan-linn-2col\.pdf$/ })
      .first();
    await cite.waitFor({ timeout: 30_000 });
    await expect.poll(() => page.getByRole('button', { name: 'Ask' }).count()).toBe(1);
    await cite.click();
    const picture = page.getByRole('complementary').getByRole('img', { name: /scan-linn-2col\.pdf/ });
    await expect.poll(() => picture.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBeGreaterThan(0);
    expect(await picture.getAttribute('src')).toContain('token=');
    await page.context().close();
  });

  it('shares a collection through a link that a second browser joins; the owner sees, removes and revokes', async () => {
    const owner = await signUp('web-sharer');
    const created = await api('POST', '/collections/', { token: owner.token, body: { name: 'Shared shelf' } });
    const { page: ownerPage, foreign } = await newPage(browser());
    await signInInBrowser(ownerPage, owner, `/app/c/${created.body.id}/sharing`);
    await ownerPage.getByLabel('New invite link that lets people').selectOption('query');
    await ownerPage.getByRole('button', { name: 'Create link' }).click();
    const linkField = ownerPage.getByLabel('The link, shown only now');
    await expect.poll(() => linkField.inputValue()).toMatch(new RegExp(`^${stack.apiUrl}/join/[A-Za-z0-9_-]{43}$`));
    const link = await linkField.inputValue();
    // The owner following their own link is told so.
    await ownerPage.goto(link);
    await expect.poll(() => ownerPage.getByRole('status').textContent()).toBe('This link is to one of your own collections.');

    // A second person, in a browser of their own, opens the link, signs up, and lands in the collection.
    const { page: guest } = await newPage(browser());
    await guest.goto(link);
    await guest.waitForURL(/\/login\?next=%2Fjoin%2F/);
    const guestEmail = `web-guest-${randomUUID().slice(0, 8)}@example.com`;
    await signUpInBrowser(guest, guestEmail);
    await guest.waitForURL(`${stack.apiUrl}/app/c/${created.body.id}`);
    const guestSide = guest.getByRole('navigation', { name: 'Collections and chats' });
    await expect.poll(() => guestSide.textContent()).toContain('Shared shelf');
    // A member does not manage sharing: no such page in the sidebar, and none at its address.
    expect(await guestSide.getByRole('link', { name: 'Sharing' }).count()).toBe(0);
    await guest.goto(`${stack.apiUrl}/app/c/${created.body.id}/sharing`);
    await expect.poll(() => guest.getByRole('heading', { level: 1 }).textContent()).toBe('Not found');
    await guest.goto(link);
    await expect.poll(() => guest.getByRole('status').textContent()).toMatch(/already a member.*query permission/);

    await ownerPage.goto(`${stack.apiUrl}/app/c/${created.body.id}/sharing`);
    const members = ownerPage.getByRole('list', { name: 'Members' });
    await expect.poll(() => members.textContent()).toContain(guestEmail);

    // The owner copies a chat session to the new member, from the chat's options.
    const chat = await api('POST', `/chat/${created.body.id}/sessions`, { token: owner.token, body: { title: 'For the guest' } });
    await ownerPage.reload();
    await ownerPage
      .getByRole('navigation', { name: 'Collections and chats' })
      .getByRole('link', { name: 'For the guest' })
      .click();
    await ownerPage.waitForURL(`${stack.apiUrl}/app/c/${created.body.id}/chat/${chat.body.id}`);
    await ownerPage.getByText('Chat options').click();
    await ownerPage.getByLabel('Share a copy with').selectOption({ label: `${guestEmail} (member)` });
    await ownerPage.getByRole('button', { name: 'Share', exact: true }).click();
    await expect.poll(() => ownerPage.getByRole('status').filter({ hasText: 'Shared.' }).count()).toBe(1);
    await ownerPage.goto(`${stack.apiUrl}/app/c/${created.body.id}/sharing`);
    const guestToken = await accessTokenIn(guest);
    const guestSessions = await api('GET', `/chat/${created.body.id}/sessions`, { token: guestToken });
    expect(guestSessions.body.map((s) => s.title)).toEqual(['For the guest']);
    expect(guestSessions.body[0]?.id).not.toBe(chat.body.id);

    await ownerPage.getByRole('button', { name: `Remove ${guestEmail}` }).click();
    await expect.poll(() => members.getByRole('listitem').count()).toBe(0);
    const links = ownerPage.getByRole('list', { name: 'Invite links' });
    await links.getByRole('button', { name: /^Revoke link / }).click();
    await expect.poll(() => links.getByRole('listitem').count()).toBe(0);

    // A revoked link says so in words.
    const { page: late } = await newPage(browser());
    await late.goto(`${stack.apiUrl}/login`);
    await signUpInBrowser(late, `web-late-${randomUUID().slice(0, 8)}@example.com`);
    await late.waitForURL(`${stack.apiUrl}/app/`);
    await late.goto(link);
    await expect.poll(() => late.getByRole('status').textContent()).toMatch(/not found/i);
    expect(foreign).toEqual([]);
    for (const p of [ownerPage, guest, late]) await p.context().close();
  });

  it('draws the quality chart once answers are scored; the retrieval settings are shown to admins only', async () => {
    const admin = await makeAdmin(await signUp('web-admin'));
    const member = await signUp('web-member');
    const shared = await collectionWithLink(admin, 'Scored', 'query');
    const id = shared.collection.id;
    expect((await api('POST', `/collections/join/${shared.link.share_token}`, { token: member.token })).status).toBe(200);
    const text = 'The barrage at La Rance in Brittany has produced tidal power since 1966. '.repeat(4);
    expect((await ingestFile(admin.token, 'rance.txt', id, text)).status).toBe('succeeded');
    const asked = await fetch(`${stack.apiUrl}/query/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${admin.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ question: 'Since when has La Rance produced tidal power?', collection_id: id }),
    });
    expect(await asked.text()).toContain('event: done');

    const { page } = await newPage(browser());
    await signInInBrowser(page, admin, `/app/c/${id}/quality`);
    const chart = page.getByRole('img', { name: 'Daily average scores, from 0 to 1' });
    // The stats refresh on their own (every 15 s) while the page is open: scoring finishes in the background.
    await expect.poll(() => chart.count(), { timeout: 60_000, interval: 500 }).toBe(1);
    expect(await chart.locator('[data-series="avg_faithfulness"] circle').count()).toBe(1);
    const records = page.getByRole('list', { name: 'Evaluation records' });
    expect(await records.textContent()).toContain('Since when has La Rance produced tidal power?');

    // Paging: 24 older records make a second page of the list (20 a page).
    await db()`
      insert into evaluations (collection_id, user_id, question, answer, total_latency_ms, retrieval_latency_ms,
                               engine, retrieval_strategy, top_k, created_at)
      select ${id}, ${admin.id}, 'Older question ' || n, 'An older answer.', 100, 5, 'test', 'similarity', 5,
             now() - n * interval '1 minute'
        from generate_series(1, 24) as n`;
    await page.reload();
    await expect.poll(() => records.getByRole('listitem').count()).toBe(20);
    expect(await page.getByRole('button', { name: 'Newer' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Older' }).click();
    await expect.poll(() => records.textContent()).toContain('Older question 24');
    expect(await records.getByRole('listitem').count()).toBe(5);
    expect(await page.getByRole('button', { name: 'Older' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Newer' }).click();
    await expect.poll(() => records.textContent()).toContain('Since when has La Rance produced tidal power?');
    await records.locator('summary').first().click();
    expect(await records.locator('.answer').first().textContent()).toContain('1966');
    expect(await page.getByRole('form', { name: 'Retrieval settings' }).count()).toBe(1);
    await page.getByLabel('Retrieval strategy').selectOption('mmr');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => page.getByRole('status').last().textContent()).toMatch(/^Saved/);
    expect((await api('GET', `/collections/${id}/config`, { token: admin.token })).body.retrieval_strategy).toBe('mmr');

    const { page: memberPage } = await newPage(browser());
    await signInInBrowser(memberPage, member, `/app/c/${id}/quality`);
    await memberPage.getByRole('heading', { name: 'Quality' }).waitFor();
    await expect.poll(() => memberPage.getByRole('list', { name: 'Evaluation records' }).textContent()).toContain('La Rance');
    expect(await memberPage.getByRole('form', { name: 'Retrieval settings' }).count()).toBe(0);
    await page.context().close();
    await memberPage.context().close();
  });

  it('holds its layout on a 360-pixel phone: nothing wider than the screen', async () => {
    const user = await signUp('web-phone');
    const created = await api('POST', '/collections/', {
      token: user.token,
      body: { name: 'A collection with a long name to wrap' },
    });
    const { page } = await newPage(browser(), { viewport: PHONE });
    await signInInBrowser(page, user, '/app/');
    const id = created.body.id;
    for (const path of [
      '/app/',
      `/app/c/${id}`,
      `/app/c/${id}/documents`,
      `/app/c/${id}/sharing`,
      `/app/c/${id}/quality`,
      '/app/personal',
      '/app/collections',
      '/app/settings',
    ]) {
      await page.goto(`${stack.apiUrl}${path}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      await page.waitForLoadState('networkidle');
      const [width, screen] = await pageAndScreenWidths(page);
      expect(width, path).toBeLessThanOrEqual(screen);
    }
    await page.context().close();
  });

  it('keeps API clients on JSON: a 401 for a missing token, a 404 for an unknown path', async () => {
    expect(await api('GET', '/collections/')).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    expect(await api('GET', '/nothing-here')).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });
});
