import { keepPreviousData, useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import { useEmails } from '../admin/emails.ts';
import { Failure } from '../Failure.tsx';
import { useSession } from '../session.ts';
import { type GroupBy, perDay, readUsage, type Usage, usageKey } from './api.ts';
import { Breakdown } from './Breakdown.tsx';
import { count, daysBetween, lastDays, usd, WINDOWS, type WindowDays } from './format.ts';
import { GROUP_LABELS } from './groups.ts';
import { UsageChart } from './UsageChart.tsx';
import './usage.css';

/** The whole window's figures: tokens, calls, cost where priced, and the daily cap where there is one. */
function Totals({ usage }: { usage: Usage }) {
  const { totals } = usage;
  return (
    <dl class="figures" aria-label="Totals">
      <div data-total="input_tokens">
        <dt>Input tokens</dt>
        <dd>{count(totals.input_tokens)}</dd>
      </div>
      <div data-total="output_tokens">
        <dt>Output tokens</dt>
        <dd>{count(totals.output_tokens)}</dd>
      </div>
      <div data-total="calls">
        <dt>Model calls</dt>
        <dd>{count(totals.calls)}</dd>
      </div>
      {usage.priced && (
        <div data-total="cost_usd">
          <dt>Cost</dt>
          <dd>{totals.cost_usd === null ? 'Not every model has a price' : usd(totals.cost_usd)}</dd>
        </div>
      )}
      {totals.characters > 0 && (
        <div data-total="characters">
          <dt>Characters embedded</dt>
          <dd>{count(totals.characters)}</dd>
        </div>
      )}
      {totals.documents > 0 && (
        <div data-total="documents">
          <dt>Passages reranked</dt>
          <dd>{count(totals.documents)}</dd>
        </div>
      )}
      {usage.daily_token_cap !== null && (
        <div data-total="daily_token_cap">
          <dt>Daily cap per user</dt>
          <dd>{count(usage.daily_token_cap)} tokens</dd>
        </div>
      )}
    </dl>
  );
}

/**
 * /app/usage: what the models did for the caller (an administrator: for everyone), per UTC day, with its totals and a
 * breakdown by model, collection, API key or (administrators) user. Loaded as a chunk of its own (App.tsx).
 */
export function UsagePage() {
  const session = useSession();
  const isAdmin = session?.user.app_metadata?.is_admin === true;
  const [days, setDays] = useState<WindowDays>(30);
  const [groupBy, setGroupBy] = useState<GroupBy>('model');
  const window = lastDays(days);
  const usage = useQuery({
    queryKey: usageKey(window, groupBy),
    queryFn: () => readUsage(window, groupBy),
    // The page keeps showing the last figures while the next window or breakdown loads, instead of emptying.
    placeholderData: keepPreviousData,
  });
  const data = usage.data;
  const everyone = data?.scope === 'all';
  const emails = useEmails(isAdmin && groupBy === 'user');
  const groups = (Object.keys(GROUP_LABELS) as GroupBy[]).filter((group) => group !== 'user' || isAdmin);

  return (
    <section class="stack page usage" aria-labelledby="usage-title">
      <h1 id="usage-title">{everyone ? 'Everyone’s usage' : 'Usage'}</h1>
      <p>
        {everyone
          ? 'As an administrator you see what the models did for every user: answers, searches, uploads and the scoring of answers. Break it down by user to see whose.'
          : 'What the models did for you: your answers and searches, your uploads and the scoring of your answers, in tokens as each provider counted them.'}
      </p>
      <div class="row">
        <label>
          Period
          <select value={days} onChange={(event) => setDays(Number(event.currentTarget.value) as WindowDays)}>
            {WINDOWS.map((n) => (
              <option key={n} value={n}>
                Last {n} days
              </option>
            ))}
          </select>
        </label>
        <label>
          Break down by
          <select value={groupBy} onChange={(event) => setGroupBy(event.currentTarget.value as GroupBy)}>
            {groups.map((group) => (
              <option key={group} value={group}>
                {GROUP_LABELS[group]}
              </option>
            ))}
          </select>
        </label>
        <p class="hint" aria-live="polite">
          {usage.isFetching ? 'Loading…' : data ? `${data.since} to ${data.until} (UTC)` : ''}
        </p>
      </div>
      <Failure error={usage.error} />
      {data && (
        <>
          <Totals usage={data} />
          {data.daily_token_cap !== null && (
            <p class="hint">
              Questions and searches stop for the day once a user’s have spent {count(data.daily_token_cap)} tokens; the count
              starts again at 00:00 UTC.
            </p>
          )}
          <h2>Tokens per day</h2>
          <UsageChart days={perDay(data.rows, daysBetween(data.since, data.until))} />
          <h2>By {GROUP_LABELS[data.group_by].toLowerCase()}</h2>
          <Breakdown usage={data} me={session?.user.id} emails={emails} />
        </>
      )}
    </section>
  );
}

export default UsagePage;
