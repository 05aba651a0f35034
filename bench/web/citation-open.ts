/**
 * How long a citation takes to open: from the click on an answer's first citation chip to the cited passage
 * highlighted on its page of a 100-page PDF, in Debian's Chromium, through the whole local stack.
 *
 *   npx tsx bench/web/citation-open.ts [--runs 12] [--append]
 *
 * A local deployment (devstack, API and ingest workers) ingests devstack/harness/long-pdf.ts's document into a
 * collection, and a chat session asks the question whose answer is on its page 73. The browser signs in at
 * /login, then each run reloads the chat page (/app/c/<collection>/chat/<session>) and times, in the page,
 * from the click on the first `button.cite` to a visible `.pdf-highlight` in a `[data-state=ready]` PDF view:
 * cold (pdf.js and its worker loaded for the first time since the reload, the document fetched from
 * Storage), then warm (the panel closed and the same chip clicked again). The browser's HTTP cache is kept
 * across reloads, as a returning reader's is; the very first open, with an empty cache, is reported apart.
 * Any Content-Security-Policy violation fails the run. With --append, the report is added to docs/benchmarks.md.
 */
import { appendFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { ask, createRagClient } from '../../client/index.ts';
import { signUpUser } from '../../devstack/harness/auth-client.ts';
import { launchChromium, signInAt, watchCspViolations } from '../../devstack/harness/browser.ts';
import { longPdf } from '../../devstack/harness/long-pdf.ts';
import { readFlags, toggle, whole } from '../harness/flags.ts';
import { load, machine } from '../harness/machine.ts';
import { createCollection, ingestAll, startBenchStack } from '../harness/stack.ts';
import { median, percentile } from '../harness/stats.ts';

const flags = readFlags({ runs: whole('12', 1, 200), append: toggle() });
const FILE = 'county-records.pdf';

/**
 * The click and the wait, in the page, so that the time is the page's own and not the driver's round trips.
 * A string: tsx would wrap a named function in a helper the page does not have.
 */
const CLICK_UNTIL_HIGHLIGHTED = `new Promise((resolve, reject) => {
  const started = performance.now();
  document.querySelector('button.cite').click();
  const check = () => {
    const mark = document.querySelector('[data-state="ready"] .pdf-highlight');
    if (mark && mark.getBoundingClientRect().width > 0) return resolve(performance.now() - started);
    if (document.querySelector('[data-state="failed"]')) return reject(new Error(document.querySelector('.pdf-view').textContent));
    if (performance.now() - started > 30000) return reject(new Error('no highlight after 30 s'));
    requestAnimationFrame(check);
  };
  check();
})`;

async function openCitation(page: Page): Promise<number> {
  return (await page.evaluate(CLICK_UNTIL_HIGHLIGHTED)) as number;
}

async function closeSource(page: Page): Promise<void> {
  await page.locator('.source-panel').getByRole('button', { name: 'Close' }).click();
  await page.waitForSelector('.pdf-view', { state: 'detached' });
}

const stack = await startBenchStack();
const browser = await launchChromium();
try {
  const auth = { supabaseUrl: stack.supabaseUrl, anonKey: stack.anonKey };
  const user = await signUpUser(auth, `bench-cite-${crypto.randomUUID().slice(0, 8)}@example.com`);
  const pdf = longPdf();
  const collectionId = await createCollection(stack, user.token, 'County records');
  const ingested = await ingestAll(stack, user.token, collectionId, [{ name: FILE, bytes: pdf.bytes }]);
  const job = ingested.files[0]?.job;
  if (job?.status !== 'succeeded') throw new Error(`ingestion: ${JSON.stringify(job)}`);

  const rag = createRagClient({ baseUrl: stack.apiUrl, token: user.token });
  const session = await rag.POST('/chat/{collection_id}/sessions', {
    params: { path: { collection_id: collectionId } },
    body: { title: 'Lighthouses' },
  });
  if (!session.data) throw new Error(`creating a session: ${JSON.stringify(session.error)}`);
  const sessionId = session.data.id;
  const asked = await ask(rag, { question: pdf.fact.question, collection_id: collectionId, session_id: sessionId });
  if (asked.error) throw new Error(`asking: ${JSON.stringify(asked.error)}`);
  for await (const event of asked.data) if (event.event === 'error') throw new Error(`answer: ${JSON.stringify(event.data)}`);

  const saved = await rag.GET('/chat/{collection_id}/sessions/{session_id}', {
    params: { path: { collection_id: collectionId, session_id: sessionId } },
  });
  const answer = saved.data?.find((message) => message.role === 'assistant');
  const firstCited = Number(/\[(\d+)\]/.exec(answer?.content ?? '')?.[1]);
  const cited = answer?.sources[firstCited - 1];
  if (!answer || !cited) throw new Error(`the answer cites no source: ${JSON.stringify(answer)}`);
  console.log(`answer: ${answer.content.slice(0, 200)}`);
  console.log(`first citation [${firstCited}]: ${cited.source}, page ${cited.page}, chunk ${cited.chunk_index}`);

  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const violations = await watchCspViolations(page);
  const chat = `/app/c/${collectionId}/chat/${sessionId}`;
  await signInAt(page, stack.apiUrl, user.email, chat);

  const cold: number[] = [];
  const warm: number[] = [];
  let firstEver = Number.NaN;
  let highlighted = '';
  let shownPage = '';
  // Run 0 is the first open with an empty cache; the runs after it are timed after a reload.
  for (let run = 0; run <= flags.runs; run++) {
    if (run > 0) await page.reload();
    await page.locator('button.cite').first().waitFor();
    const opened = await openCitation(page);
    if (run === 0) firstEver = opened;
    else cold.push(opened);
    highlighted = await page.evaluate(
      "[...document.querySelectorAll('.pdf-highlight')].map((element) => element.textContent).join(' ')",
    );
    shownPage = (await page.locator('.pdf-nav span').textContent()) ?? '';
    await closeSource(page);
    const again = await openCitation(page);
    if (run > 0) warm.push(again);
    await closeSource(page);
    process.stdout.write(`run ${run}: ${opened.toFixed(0)} ms, again ${again.toFixed(0)} ms\n`);
  }
  if (violations.length > 0) throw new Error(`Content-Security-Policy violations:\n${violations.join('\n')}`);

  const m = machine();
  const row = (what: string, times: number[]) =>
    `| ${what} | ${times.length} | ${median(times).toFixed(0)} | ${percentile(times, 90).toFixed(0)} | ${Math.max(...times).toFixed(0)} |`;
  const report = [
    '',
    `## Opening a citation at its passage (issue 23)`,
    '',
    `**Command:** \`npx tsx bench/web/citation-open.ts --runs ${flags.runs}\` (${new Date().toISOString().slice(0, 10)}). ` +
      `${m.cpu}, ${m.cores} cores (nproc), ${m.memGiB.toFixed(0)} GiB, Node ${m.node}, ${await browser.version()}; ` +
      `load ${load().join(' ')} at the end.`,
    '',
    `A ${pdf.pages.length}-page text PDF (${(pdf.bytes.length / 1024).toFixed(0)} KB), the question "${pdf.fact.question}", ` +
      `its first citation [${firstCited}] on page ${cited.page} (the view: "${shownPage}"). From the click on ` +
      'the chip to the passage highlighted on its page, in milliseconds; first open of the page with an empty cache: ' +
      `${firstEver.toFixed(0)} ms.`,
    '',
    '| open | runs | median ms | p90 ms | max ms |',
    '| --- | --: | --: | --: | --: |',
    row('cold: after a reload', cold),
    row('warm: the same chip again', warm),
    '',
    `Highlighted: "${highlighted.slice(0, 160)}…"`,
    '',
  ].join('\n');
  console.log(report);
  if (flags.append) appendFileSync(new URL('../../docs/benchmarks.md', import.meta.url), report);
} finally {
  await browser.close();
  await stack.stop();
}
