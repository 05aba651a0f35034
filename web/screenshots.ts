/**
 * Screenshots of the web app's main pages at desktop and phone width, in the light and the dark theme, for the
 * README (docs/screenshots/). Starts a throwaway local deployment, fills it with a collection, three documents
 * (one a PDF) and a scored conversation, and photographs it in Debian's Chromium: the chat with a citation open
 * at its passage in the PDF, the phone's drawer, the documents, quality and settings pages. So that the quality
 * chart has a trend to draw, the conversation's scored records are also copied into the six days
 * before today, with their scores varied (the only rows not made through the API). The settings page
 * shows two API keys (one used) and a key just made, and two webhooks whose receivers, on loopback (a
 * origin trusted for webhooks), answer 204 and 503: one delivery made, one waiting for its retry. The sources page
 * shows a second collection's two sources, kept in sync from a small site served on loopback (an origin trusted for
 * URL ingestion): the site, synced twice, and one page, paused; and the site's run history. The usage page shows the
 * user's model usage; so that its chart has days to draw, the day's usage of questions and scoring is also copied into
 * the 13 days before today, its tokens varied (rows not made through the API either). The admin page, seen by a
 * second user made an administrator, shows a URL job that failed (a page the site does not have), one stuck (its rows
 * written as POST /ingest/url writes them, without the queue message, and left untouched for 25 minutes, which is what a
 * lost message leaves), a second such job that the administrator retried, and the audit log of all of it.
 *
 *   npx tsx web/screenshots.ts                 every screenshot
 *   npx tsx web/screenshots.ts usage admin     only those named (the part of the name before the theme)
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import postgres from 'postgres';
import { createJobRepo } from '#core/db/jobs.ts';
import { grantAdmin, signIn, signUpUser } from '../devstack/harness/auth-client.ts';
import { launchChromium } from '../devstack/harness/browser.ts';
import { startLocalDeployment } from '../devstack/local/deployment.ts';

const root = new URL('..', import.meta.url).pathname;
const out = join(root, 'docs/screenshots');
// The screenshots asked for by name (`usage`, `admin`, `chat`, …), or, with none named, all of them.
const only = new Set(process.argv.slice(2));
const wanted = (name: string) => only.size === 0 || only.has(name);
const NOTES = `# Tidal energy

## La Rance
The barrage at La Rance in Brittany has produced tidal power since 1966. Its 24 turbines run on the ebb and the flood,
and it delivers about 500 GWh a year.

## How a barrage works
Sluice gates let the flood tide into the estuary. At high water they close, and the trapped water is released
through the turbines as the tide ebbs.
`;

const BARRAGES = `Barrage,Country,Opened,Capacity (MW)
La Rance,France,1966,240
Sihwa Lake,South Korea,2011,254
Annapolis Royal,Canada,1984,20
`;

// The webhooks' receivers: one takes every delivery, the other is down, so its delivery waits for a retry.
const receiver = createServer((request, response) => {
  request.resume();
  request.on('end', () => response.writeHead(request.url === '/hooks/rag' ? 204 : 503).end());
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;

// The sources' web site: a start page linking to three articles, and a page of notes kept on its own.
const article = (title: string, text: string, links = '') =>
  `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p>${links}</main></body></html>`;
const SITE: Record<string, string> = {
  '/tides/': article(
    'Tidal power stations',
    'The barrages that turn the tide into electricity, one page each.',
    '<ul><li><a href="/tides/la-rance.html">La Rance</a></li><li><a href="/tides/sihwa.html">Sihwa Lake</a></li>' +
      '<li><a href="/tides/annapolis.html">Annapolis Royal</a></li></ul>',
  ),
  '/tides/la-rance.html': article('La Rance', 'Opened in 1966 in Brittany: 24 turbines, 240 MW, about 500 GWh a year.'),
  '/tides/sihwa.html': article('Sihwa Lake', 'Opened in 2011 in South Korea: ten turbines on a seawall, 254 MW.'),
  '/tides/annapolis.html': article('Annapolis Royal', 'Opened in 1984 in Nova Scotia: one Straflo turbine of 20 MW.'),
  '/notes.html': article('Reading notes', 'Tidal range is largest in funnel-shaped bays such as the Bay of Fundy.'),
};
const site = createServer((request, response) => {
  const page = SITE[request.url ?? ''];
  if (!page) return void response.writeHead(404).end();
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
});
await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
const siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}`;

const deployment = await startLocalDeployment({
  quiet: true,
  vars: { WEBHOOK_TRUSTED_ORIGINS: receiverUrl, INGEST_TRUSTED_ORIGINS: siteUrl },
});
const browser = await launchChromium();
try {
  const apiUrl = deployment.api.url;
  const { stack } = deployment;
  const user = await signUpUser({ supabaseUrl: stack.supabaseUrl, anonKey: stack.keys.anonKey }, 'ada@example.com');
  const call = async (method: string, path: string, body?: BodyInit, type = 'application/json') => {
    const response = await fetch(`${apiUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${user.token}`, ...(body && type ? { 'Content-Type': type } : {}) },
      body,
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response;
  };
  const collection = (await (await call('POST', '/collections/', JSON.stringify({ name: 'Tidal energy' }))).json()) as {
    id: string;
  };
  const readingList = (await (await call('POST', '/collections/', JSON.stringify({ name: 'Reading list' }))).json()) as {
    id: string;
  };
  const events = ['ingest.succeeded', 'ingest.failed', 'ingest.partial'];
  await call('POST', '/webhooks/', JSON.stringify({ url: `${receiverUrl}/hooks/archive`, events: ['ingest.succeeded'] }));
  await call('POST', '/webhooks/', JSON.stringify({ url: `${receiverUrl}/hooks/rag`, events, collection_id: collection.id }));
  const inAYear = new Date(Date.now() + 365 * 86_400_000).toISOString();
  const body = (name: string, scopes: string[], more = {}) => JSON.stringify({ name, scopes, ...more });
  await call('POST', '/keys/', body('dashboard', ['collections:read']));
  const { key } = (await (
    await call('POST', '/keys/', body('nightly sync', ['ingest', 'query'], { collection_id: collection.id, expires_at: inAYear }))
  ).json()) as { key: string };
  await fetch(`${apiUrl}/ingest/jobs`, { headers: { 'X-API-Key': key } });
  for (const [name, bytes] of [
    ['tidal-energy.md', new TextEncoder().encode(NOTES)],
    ['handbook-1p.docx', readFileSync(join(root, 'test/fixtures/docs/handbook-1p.docx'))],
    ['layout-parser-paper.pdf', readFileSync(join(root, 'test/fixtures/docs/paper-with-table.pdf'))],
    ['barrages.csv', new TextEncoder().encode(BARRAGES)],
  ] as const) {
    const form = new FormData();
    form.append('file', new Blob([bytes]), name);
    const { job_id } = (await (await call('POST', `/ingest?collection_id=${collection.id}`, form, '')).json()) as {
      job_id: string;
    };
    for (let status = ''; !['succeeded', 'partial', 'failed'].includes(status); ) {
      // Polled at a second, under the general limit (120 a minute) however slow the jobs are.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      status = ((await (await call('GET', `/ingest/jobs/${job_id}`)).json()) as { status: string }).status;
    }
  }
  const session = (await (await call('POST', `/chat/${collection.id}/sessions`)).json()) as { id: string };
  const questions = [
    'When did La Rance start producing tidal power?',
    'Which barrage opened in 2011, in which country, and with what capacity?',
    'How can users employ OCR models in LayoutParser?',
  ];
  for (const question of questions) {
    const body = JSON.stringify({ question, collection_id: collection.id, session_id: session.id });
    await (await call('POST', '/query/', body)).text();
  }
  await new Promise((resolve) => setTimeout(resolve, 5000)); // scoring, in the background
  const sql = postgres(stack.databaseUrl, { max: 1 });
  await sql`
    insert into evaluations (collection_id, user_id, question, answer, sources, faithfulness_score,
                             context_relevance_score, total_latency_ms, embedding_latency_ms, retrieval_latency_ms,
                             generation_latency_ms, time_to_first_token_ms, engine, retrieval_strategy, top_k, scorer,
                             scored_at, created_at)
    select collection_id, user_id, question, answer, sources,
           least(1, greatest(0, faithfulness_score - 0.35 + 0.06 * d)),
           least(1, greatest(0, context_relevance_score - 0.2 + 0.03 * d + 0.05 * (d % 2))),
           total_latency_ms + 40 * (6 - d), embedding_latency_ms, retrieval_latency_ms, generation_latency_ms,
           time_to_first_token_ms, engine, retrieval_strategy, top_k, scorer,
           scored_at - (7 - d) * interval '1 day', created_at - (7 - d) * interval '1 day'
      from evaluations, generate_series(1, 6) as d
     where collection_id = ${collection.id} and scored_at is not null`;
  await sql.end();

  // Sources in the reading list (the documents above stay the only ones in "Tidal energy"): the site synced twice, the
  // page once and then paused.
  const syncEnded = async (id: string) => {
    for (let status = 'running'; status === 'running'; ) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const source = (await (await call('GET', `/sources/${id}`)).json()) as { last_run: { status: string } | null };
      status = source.last_run?.status ?? 'running';
    }
  };
  const addSource = async (body: object) =>
    (
      (await (await call('POST', '/sources/', JSON.stringify({ collection_id: readingList.id, ...body }))).json()) as {
        id: string;
      }
    ).id;
  const siteSource = await addSource({ url: `${siteUrl}/tides/`, kind: 'site', schedule: 'daily', include: ['/tides/*'] });
  const pageSource = await addSource({ url: `${siteUrl}/notes.html`, kind: 'url', schedule: 'weekly' });
  await syncEnded(siteSource);
  await syncEnded(pageSource);
  await call('POST', `/sources/${siteSource}/sync`);
  await syncEnded(siteSource);
  await call('PATCH', `/sources/${pageSource}`, JSON.stringify({ paused: true }));

  // Usage: the day's questions and their scoring copied into the 13 days before, their tokens varied day by day.
  const usageSql = postgres(stack.databaseUrl, { max: 1 });
  await usageSql`
    insert into usage_events (created_at, day, user_id, api_key_id, collection_id, request_id, evaluation_id, kind, purpose,
                              model, calls, input_tokens, output_tokens, characters, documents)
    select created_at - d * interval '1 day', day - d, user_id, api_key_id, collection_id, request_id, evaluation_id, kind,
           purpose, model, calls, (input_tokens * (0.4 + (d * 37 % 10) / 10.0))::int,
           (output_tokens * (0.3 + (d * 53 % 10) / 8.0))::int, characters, documents
      from usage_events, generate_series(1, 13) as d
     where user_id = ${user.id} and purpose in ('query', 'scoring')`;

  // The admin page's jobs: one failed (a page the site does not have), two whose queue message was lost (rows only,
  // untouched for 25 minutes), one of them retried by the administrator.
  const failedJob = (await (
    await call('POST', '/ingest/url', JSON.stringify({ url: `${siteUrl}/tides/swansea.html`, collection_id: readingList.id }))
  ).json()) as { job_id: string };
  for (let status = ''; status !== 'failed' && status !== 'succeeded'; ) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    status = ((await (await call('GET', `/ingest/jobs/${failedJob.job_id}`)).json()) as { status: string }).status;
  }
  const lostJob = async (url: string) => {
    const [documentId, jobId] = [crypto.randomUUID(), crypto.randomUUID()];
    const job = { id: jobId, user_id: user.id, collection_id: readingList.id, source: url, api_key_id: null };
    await createJobRepo(usageSql).insertWithDocument(
      {
        id: documentId,
        collection_id: readingList.id,
        user_id: user.id,
        name: url,
        source_kind: 'url',
        source_url: url,
        content_type: 'text/html',
        doc_type: null,
        size_bytes: 0,
        storage_path: null,
        chunk_size: 1000,
      },
      job,
    );
    await usageSql`update ingest_jobs set updated_at = now() - interval '25 minutes' where id = ${jobId}`;
    return jobId;
  };
  await lostJob(`${siteUrl}/tides/sihwa.html`);
  const retried = await lostJob(`${siteUrl}/tides/annapolis.html`);
  await usageSql.end();
  const grace = await signUpUser({ supabaseUrl: stack.supabaseUrl, anonKey: stack.keys.anonKey }, 'grace@example.com');
  await grantAdmin(
    { supabaseUrl: stack.supabaseUrl, anonKey: stack.keys.anonKey, serviceRoleKey: stack.keys.serviceRoleKey },
    grace.id,
  );
  const admin = await signIn({ supabaseUrl: stack.supabaseUrl, anonKey: stack.keys.anonKey }, grace.email);
  const retry = await fetch(`${apiUrl}/admin/jobs/${retried}/retry`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${admin.token}` },
  });
  if (retry.status !== 202) throw new Error(`POST /admin/jobs/{id}/retry: ${retry.status} ${await retry.text()}`);

  const shoot = async (page: Page, name: string, fullPage = false) => {
    if (wanted(name.replace(/-(light|dark)-(desktop|phone)$/, '')))
      await page.screenshot({ path: join(out, `${name}.png`), fullPage });
  };
  for (const theme of ['light', 'dark'] as const) {
    for (const [label, viewport] of [
      ['desktop', { width: 1280, height: 900 }],
      ['phone', { width: 360, height: 780 }],
    ] as const) {
      const suffix = `${theme}-${label}`;
      const context = await browser.newContext({ viewport, deviceScaleFactor: 1, colorScheme: theme });
      const page = await context.newPage();
      await page.goto(`${apiUrl}/login`);
      await page.getByLabel('Email').waitFor();
      if (theme === 'light') await shoot(page, `login-${suffix}`);
      await page.getByLabel('Email').fill(user.email);
      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${apiUrl}/app/`);

      // The chat: three answers, the last citing the PDF, opened at its passage.
      await page.goto(`${apiUrl}/app/c/${collection.id}/chat/${session.id}`);
      const messages = page.getByRole('list', { name: 'Messages' });
      await messages.locator('.message.assistant').nth(2).waitFor();
      if (label === 'phone') {
        await page.getByRole('button', { name: 'Collections and chats' }).click();
        await page.getByRole('navigation', { name: 'Collections and chats' }).getByRole('link', { name: 'New chat' }).waitFor();
        await page.waitForTimeout(300); // the drawer's slide
        await shoot(page, `drawer-${suffix}`);
        await page.keyboard.press('Escape');
        await page.waitForTimeout(300);
        await messages.locator('.answer table').first().scrollIntoViewIfNeeded();
      }
      await shoot(page, `chat-${suffix}`);
      const pdfCitation = messages
        .locator('.message.assistant')
        .nth(2)
        .getByRole('button', { name: /layout-parser-paper\.pdf/ });
      await pdfCitation.first().click();
      await page.locator('.pdf-view[data-state="ready"] .pdf-highlight').first().waitFor({ timeout: 30_000 });
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      await shoot(page, `citation-${suffix}`);

      await page.goto(`${apiUrl}/app/c/${collection.id}/documents`);
      await page.getByRole('table').getByRole('row').nth(4).waitFor();
      await shoot(page, `documents-${suffix}`, label === 'desktop');

      await page.goto(`${apiUrl}/app/c/${collection.id}/quality`);
      await page.getByRole('img', { name: 'Daily average scores, from 0 to 1' }).waitFor({ timeout: 30_000 });
      await shoot(page, `quality-${suffix}`, label === 'desktop');

      await page.goto(`${apiUrl}/app/c/${readingList.id}/sources`);
      const sources = page.getByRole('list', { name: 'Sources', exact: true });
      await sources.locator('li.source').nth(1).waitFor();
      // A phone shows the sources, below the form (the heading just under the bar).
      if (label === 'phone') {
        await page.getByRole('heading', { name: 'This collection’s sources' }).evaluate((heading) => {
          heading.scrollIntoView();
          window.scrollBy(0, -64);
        });
      }
      await shoot(page, `sources-${suffix}`, label === 'desktop');
      if (theme === 'light') {
        await page.getByRole('button', { name: `Run history of ${siteUrl}/tides/` }).click();
        await page.getByRole('dialog').getByRole('list', { name: 'Runs, newest first' }).locator(':scope > li').nth(1).waitFor();
        await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
        await shoot(page, `source-runs-${suffix}`);
        await page.keyboard.press('Escape');
      }

      // Usage: the last 30 days' tokens per day, the totals, and the breakdown by model.
      await page.goto(`${apiUrl}/app/usage`);
      await page.locator('table.breakdown tbody tr').first().waitFor();
      await shoot(page, `usage-${suffix}`, label === 'desktop');

      if (theme === 'light') {
        // Settings: a key made just now (shown once), the keys, and the webhooks with one's deliveries open.
        await page.goto(`${apiUrl}/app/settings`);
        const form = page.getByRole('form', { name: 'New API key' });
        await form.getByLabel('Name').fill('notebook');
        await form.getByRole('checkbox', { name: /^query:/ }).check();
        await form.getByRole('combobox', { name: /^Collection/ }).selectOption({ label: 'Tidal energy' });
        await form.getByRole('button', { name: 'Create key' }).click();
        await page.getByLabel('API key', { exact: true }).waitFor();
        const hooks = page.getByRole('list', { name: 'Webhooks' });
        await hooks.getByRole('listitem').nth(1).waitFor();
        for (const summary of await hooks.locator('summary').all()) await summary.click();
        const deliveries = page.getByRole('list', { name: 'Deliveries' });
        for (const nth of [0, 1]) await deliveries.nth(nth).getByRole('listitem').first().waitFor();
        await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
        await shoot(page, `settings-${suffix}`, true);
        // The next width makes its own.
        const keys = (await (await call('GET', '/keys/')).json()) as { id: string; name: string }[];
        for (const made of keys.filter((k) => k.name === 'notebook')) await call('DELETE', `/keys/${made.id}`);
      }
      await context.close();
    }
  }
  // The admin page, as the administrator sees it: the counts, the users, the stuck job, the audit log.
  for (const theme of ['light', 'dark'] as const) {
    for (const [label, viewport] of [
      ['desktop', { width: 1280, height: 900 }],
      ['phone', { width: 360, height: 780 }],
    ] as const) {
      const context = await browser.newContext({ viewport, deviceScaleFactor: 1, colorScheme: theme });
      const page = await context.newPage();
      await page.goto(`${apiUrl}/login?next=${encodeURIComponent('/app/admin')}`);
      await page.getByLabel('Email').fill(grace.email);
      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${apiUrl}/app/admin`);
      await page.locator('table.users tbody tr').nth(1).waitFor();
      await page.locator('li.job').first().waitFor();
      await page.locator('table.audit tbody tr').first().waitFor();
      await shoot(page, `admin-${theme}-${label}`, label === 'desktop');
      await context.close();
    }
  }
  console.log(`screenshots in ${out}`);
} finally {
  await browser.close();
  await deployment.stop();
  receiver.close();
  site.close();
}
