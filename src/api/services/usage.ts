import type { Caller } from '#core/caller.ts';
import { isUuid } from '#core/db/client.ts';
import type { UsageGroup, UsageRepo, UsageRow } from '#core/db/usage.ts';
import { DomainError, invalid, notFound } from '#core/errors.ts';
import { secondsUntilQuotaResets } from '#core/ingest-quota.ts';
import type { ModelPriceTable } from '../config.ts';
import type { UsageView } from '../schemas/usage.ts';
import type { AccessService } from './access.ts';

/** The longest window one request may read. */
export const MAX_USAGE_DAYS = 366;
const DEFAULT_DAYS = 30;
const DAY_MS = 86_400_000;

export interface UsageQuery {
  group_by: UsageGroup;
  since?: string;
  until?: string;
  collection_id?: string;
}

const count = (n: number) => n.toLocaleString('en-US');

/** Why a question was refused (429 token_cap_exceeded). */
export const tokenCapRefusal = (perDay: number, used: number) =>
  `Your daily model budget of ${count(perDay)} tokens is used up (${count(used)} used today by your questions ` +
  'and searches); it resets at 00:00 UTC';

type Totals = Omit<UsageView['totals'], never>;
const zero = (): Totals => ({ calls: 0, input_tokens: 0, output_tokens: 0, characters: 0, documents: 0, cost_usd: 0 });

/** USD for one model's tokens; null without a price table or a price for it. */
export function costUsd(
  prices: ModelPriceTable | undefined,
  row: { model: string; input_tokens: number; output_tokens: number },
): number | null {
  const price = prices?.[row.model];
  if (!price) return null;
  return (row.input_tokens * price.input + row.output_tokens * price.output) / 1_000_000;
}

/** The days a read covers: `since`…`until` (UTC dates, both included), by default the last 30 days. */
export function usageWindow(query: { since?: string; until?: string }): { since: string; until: string } {
  const until = query.until ?? new Date().toISOString().slice(0, 10);
  const since =
    query.since ?? new Date(Date.parse(`${until}T00:00:00Z`) - (DEFAULT_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
  const days = (Date.parse(`${until}T00:00:00Z`) - Date.parse(`${since}T00:00:00Z`)) / DAY_MS + 1;
  if (days < 1) throw invalid('since', '`since` must not be after `until`');
  if (days > MAX_USAGE_DAYS) throw invalid('since', `At most ${MAX_USAGE_DAYS} days at once`);
  return { since, until };
}

/**
 * Reading recorded usage (own, a collection's for its owner, everyone's for an administrator), pricing it,
 * and the daily token cap on questions.
 */
export function createUsageService(deps: {
  repo: UsageRepo;
  access: AccessService;
  prices: ModelPriceTable | undefined;
  tokensPerDay: number | undefined;
  /** False: nothing is recorded (USAGE_RECORDING=off). */
  recording: boolean;
}) {
  const { repo, access, prices, tokensPerDay, recording } = deps;

  const costOf = (row: UsageRow) => costUsd(prices, row);
  const add = (into: Totals, row: UsageRow) => {
    into.calls += row.calls;
    into.input_tokens += row.input_tokens;
    into.output_tokens += row.output_tokens;
    into.characters += row.characters;
    into.documents += row.documents;
    const cost = costOf(row);
    into.cost_usd = into.cost_usd === null || cost === null ? null : into.cost_usd + cost;
  };

  return {
    async read(caller: Caller, query: UsageQuery): Promise<UsageView> {
      const { since, until } = usageWindow(query);
      let scope: UsageView['scope'];
      let filter: { userId?: string; collectionId?: string };
      if (query.collection_id !== undefined) {
        if (!isUuid(query.collection_id)) throw notFound('Collection');
        // A collection's usage is its owner's to read (members' questions in it included), and an administrator's.
        if (caller.isAdmin) await access.requireAdmin(caller, query.collection_id);
        else await access.requireOwner(caller, query.collection_id);
        scope = 'collection';
        filter = { collectionId: query.collection_id.toLowerCase() };
      } else if (caller.isAdmin) {
        scope = 'all';
        filter = {};
      } else {
        scope = 'own';
        filter = { userId: caller.id };
      }
      const rows = await repo.summary({ since, until, ...filter }, query.group_by);
      // The repository's rows are per day, group and model (models are priced one by one); one row per day and group here.
      const byDayGroup = new Map<string, UsageView['rows'][number]>();
      const totals = zero();
      for (const row of rows) {
        const key = `${row.day}\n${row.group ?? ''}`;
        let out = byDayGroup.get(key);
        if (!out) {
          out = { date: row.day, group: row.group, ...zero() };
          byDayGroup.set(key, out);
        }
        add(out, row);
        add(totals, row);
      }
      const unpriced = (t: Totals): Totals => (prices ? t : { ...t, cost_usd: null });
      return {
        since,
        until,
        group_by: query.group_by,
        scope,
        priced: prices !== undefined,
        daily_token_cap: tokensPerDay ?? null,
        rows: [...byDayGroup.values()].map((row) => ({ ...unpriced(row), date: row.date, group: row.group })),
        totals: unpriced(totals),
      };
    },

    /** A search's embedding and reranking calls, under its caller, key, first collection and request. */
    async recordSearch(
      caller: Caller,
      where: { collectionId: string | null; requestId: string },
      usages: Parameters<UsageRepo['record']>[1],
    ): Promise<void> {
      if (!recording) return;
      await repo.record(
        {
          userId: caller.id,
          apiKeyId: caller.key?.id ?? null,
          collectionId: where.collectionId?.toLowerCase() ?? null,
          requestId: where.requestId,
          purpose: 'search',
        },
        usages,
      );
    },

    /** 429 token_cap_exceeded once the caller's questions have spent today's tokens; no cap: nothing to check. */
    async requireWithinCap(caller: Caller): Promise<void> {
      if (tokensPerDay === undefined) return;
      const used = await repo.tokensToday(caller.id);
      if (used < tokensPerDay) return;
      throw new DomainError('token_cap_exceeded', tokenCapRefusal(tokensPerDay, used), {
        retryAfter: secondsUntilQuotaResets(),
      });
    },
  };
}

export type UsageService = ReturnType<typeof createUsageService>;
