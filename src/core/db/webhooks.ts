import type { WebhookEvent } from '../webhooks/payload.ts';
import type { Sql } from './client.ts';

/** A registration as its owner sees it; the secret is shown once, at creation. */
export interface WebhookRow {
  id: string;
  url: string;
  events: WebhookEvent[];
  collection_id: string | null;
  active: boolean;
  created_at: string;
  updated_at: string;
}

const LISTED = 'id, url, events, collection_id, active, created_at, updated_at';

export function createWebhookRepo(sql: Sql) {
  return {
    async insert(
      userId: string,
      hook: { url: string; events: WebhookEvent[]; collectionId: string | null; secret: string },
    ): Promise<WebhookRow> {
      const [row] = await sql<WebhookRow[]>`
        insert into webhooks (user_id, url, events, collection_id, secret)
        values (${userId}, ${hook.url}, ${sql.json(hook.events)}, ${hook.collectionId}, ${hook.secret})
        returning ${sql.unsafe(LISTED)}`;
      return row as WebhookRow;
    },

    list(userId: string): Promise<WebhookRow[]> {
      return sql<WebhookRow[]>`
        select ${sql.unsafe(LISTED)} from webhooks where user_id = ${userId} order by created_at desc, id`;
    },

    async count(userId: string): Promise<number> {
      const [row] = await sql<{ count: number }[]>`select count(*)::int as count from webhooks where user_id = ${userId}`;
      return row?.count ?? 0;
    },

    /** Only the owner's own registration; anyone else's does not exist. */
    async findOwn(userId: string, id: string): Promise<WebhookRow | undefined> {
      const [row] = await sql<WebhookRow[]>`
        select ${sql.unsafe(LISTED)} from webhooks where id = ${id} and user_id = ${userId}`;
      return row;
    },

    async update(
      userId: string,
      id: string,
      changes: { url?: string; events?: WebhookEvent[]; active?: boolean },
    ): Promise<WebhookRow | undefined> {
      const [row] = await sql<WebhookRow[]>`
        update webhooks
           set url = coalesce(${changes.url ?? null}, url),
               events = coalesce(${changes.events ? sql.json(changes.events) : null}::jsonb, events),
               active = coalesce(${changes.active ?? null}::boolean, active),
               updated_at = now()
         where id = ${id} and user_id = ${userId}
        returning ${sql.unsafe(LISTED)}`;
      return row;
    },

    /** Every attempt from now on, retries of earlier deliveries included, is signed with the new secret. */
    async replaceSecret(userId: string, id: string, secret: string): Promise<WebhookRow | undefined> {
      const [row] = await sql<WebhookRow[]>`
        update webhooks set secret = ${secret}, updated_at = now()
         where id = ${id} and user_id = ${userId}
        returning ${sql.unsafe(LISTED)}`;
      return row;
    },

    /** Its deliveries go with it. */
    async delete(userId: string, id: string): Promise<boolean> {
      return (await sql`delete from webhooks where id = ${id} and user_id = ${userId} returning id`).length > 0;
    },
  };
}

export type WebhookRepo = ReturnType<typeof createWebhookRepo>;
