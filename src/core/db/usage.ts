import type { ModelUsage } from '../adapters/models.ts';
import type { Sql } from './client.ts';

export type UsagePurpose = 'query' | 'search' | 'ingest' | 'scoring';

/** Whom and what a batch of model calls is for. */
export interface UsageContext {
  userId: string;
  apiKeyId: string | null;
  collectionId: string | null;
  requestId: string | null;
  jobId?: string | null;
  evaluationId?: string | null;
  purpose: UsagePurpose;
}

export type UsageGroup = 'user' | 'key' | 'collection' | 'model';

/** Which rows a summary reads: every filter given must hold. */
export interface UsageFilter {
  since: string;
  until: string;
  userId?: string;
  collectionId?: string;
}

export interface UsageRow {
  day: string;
  /** The user, key, collection or model id; null where a row has none (no key, the personal space). */
  group: string | null;
  model: string;
  calls: number;
  input_tokens: number;
  output_tokens: number;
  characters: number;
  documents: number;
}

/** Calls of one kind and model are summed into one row: a question's events are a handful of rows. */
function merged(usages: readonly ModelUsage[]): (ModelUsage & { calls: number })[] {
  const byModel = new Map<string, ModelUsage & { calls: number }>();
  for (const usage of usages) {
    const key = `${usage.kind}\n${usage.model}`;
    const seen = byModel.get(key);
    if (!seen) byModel.set(key, { ...usage, calls: 1 });
    else {
      seen.calls += 1;
      seen.inputTokens += usage.inputTokens;
      seen.outputTokens += usage.outputTokens;
      seen.characters += usage.characters;
      seen.documents += usage.documents;
    }
  }
  return [...byModel.values()];
}

/** The `usage_events` rows of a batch of calls: one per kind and model. */
export function usageRows(context: UsageContext, usages: readonly ModelUsage[]) {
  return merged(usages).map((u) => ({
    user_id: context.userId,
    api_key_id: context.apiKeyId,
    collection_id: context.collectionId,
    request_id: context.requestId,
    job_id: context.jobId ?? null,
    evaluation_id: context.evaluationId ?? null,
    purpose: context.purpose,
    kind: u.kind,
    model: u.model,
    calls: u.calls,
    input_tokens: Math.max(0, Math.round(u.inputTokens)),
    output_tokens: Math.max(0, Math.round(u.outputTokens)),
    characters: u.characters,
    documents: u.documents,
  }));
}

export type UsageEventRow = ReturnType<typeof usageRows>[number];

export function createUsageRepo(sql: Sql) {
  return {
    /** One insert for every call a request, a step or a scoring made. */
    async record(context: UsageContext, usages: readonly ModelUsage[]): Promise<void> {
      const rows = usageRows(context, usages);
      if (rows.length > 0) await sql`insert into usage_events ${sql(rows)}`;
    },

    /**
     * A scored answer's judge calls, under the answer's own user and collection (its record), the request id
     * its scoring message carried (the answer's), else the answer's usage row's, and that row's API key:
     * scoring knows only the evaluation. The answer's usage is written in its record's statement, before its
     * scoring is queued, so the row is there.
     */
    async recordForEvaluation(evaluationId: string, usages: readonly ModelUsage[], requestId: string | null): Promise<void> {
      for (const u of merged(usages)) {
        await sql`
          insert into usage_events (user_id, api_key_id, collection_id, request_id, evaluation_id, purpose, kind,
                                    model, calls, input_tokens, output_tokens, characters, documents)
          select e.user_id, asked.api_key_id, e.collection_id, coalesce(${requestId}, asked.request_id), e.id, 'scoring', ${u.kind},
                 ${u.model}, ${u.calls}, ${Math.round(u.inputTokens)}, ${Math.round(u.outputTokens)}, ${u.characters},
                 ${u.documents}
            from evaluations e
            left join lateral (
              select api_key_id, request_id from usage_events
               where evaluation_id = e.id and purpose = 'query' limit 1) asked on true
           where e.id = ${evaluationId}`;
      }
    },

    /**
     * Tokens (in and out, every kind) the user's questions and searches, and their scoring, used today (UTC),
     * for the daily cap. Ingestion is left out: its own quota (chunks) governs it.
     */
    async tokensToday(userId: string): Promise<number> {
      const [row] = await sql<{ used: string }[]>`
        select coalesce(sum(input_tokens + output_tokens), 0)::bigint as used from usage_events
         where user_id = ${userId} and day = (now() at time zone 'utc')::date and purpose <> 'ingest'`;
      return Number(row?.used ?? 0);
    },

    /** Per day, group and model, oldest day first. `since` and `until` are dates (UTC), both included. */
    async summary(filter: UsageFilter, groupBy: UsageGroup): Promise<UsageRow[]> {
      const group = {
        user: sql`user_id::text`,
        key: sql`api_key_id::text`,
        collection: sql`collection_id::text`,
        model: sql`model`,
      }[groupBy];
      return sql<UsageRow[]>`
        select to_char(day, 'YYYY-MM-DD') as day, ${group} as "group", model,
               sum(calls)::int as calls, sum(input_tokens)::bigint::float8 as input_tokens,
               sum(output_tokens)::bigint::float8 as output_tokens, sum(characters)::bigint::float8 as characters,
               sum(documents)::int as documents
          from usage_events
         where day between ${filter.since}::date and ${filter.until}::date
           ${filter.userId ? sql`and user_id = ${filter.userId}` : sql``}
           ${filter.collectionId ? sql`and collection_id = ${filter.collectionId}` : sql``}
         group by 1, 2, 3
         order by 1, 2 nulls first, 3`;
    },
  };
}

export type UsageRepo = ReturnType<typeof createUsageRepo>;
