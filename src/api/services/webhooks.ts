import type { Caller } from '#core/caller.ts';
import { isUuid } from '#core/db/client.ts';
import type { DeliveryRepo, DeliveryRow } from '#core/db/webhook-deliveries.ts';
import type { WebhookRepo, WebhookRow } from '#core/db/webhooks.ts';
import { conflict, invalid, notFound } from '#core/errors.ts';
import { newWebhookSecret } from '#core/messages/webhook-signing.ts';
import type { WebhookEvent } from '#core/messages/webhooks.ts';
import type { UrlVerdict } from '#core/urls/url-policy.ts';
import type { AccessService } from './access.ts';

/** Registrations per user: every job's ending fans out to each of them. */
export const MAX_WEBHOOKS_PER_USER = 20;

export interface WebhookDeps {
  webhooks: WebhookRepo;
  deliveries: DeliveryRepo;
  access: AccessService;
  /** The receiver address policy (src/core/urls/receiver-policy.ts). */
  checkUrl: (url: string) => Promise<UrlVerdict>;
}

/** The signing secret is in this answer only. */
export type CreatedWebhook = WebhookRow & { secret: string };

export function createWebhookService(deps: WebhookDeps) {
  const { webhooks, deliveries, access } = deps;

  /** http(s), a public host or one of WEBHOOK_TRUSTED_ORIGINS, never an origin trusted for ingestion only; 422 with the reason otherwise. */
  async function allowedUrl(url: string): Promise<string> {
    const verdict = await deps.checkUrl(url);
    if (!verdict.ok) throw invalid('url', verdict.reason, 'url_refused');
    return verdict.url.href;
  }

  async function own(caller: Caller, id: string): Promise<WebhookRow> {
    const hook = isUuid(id) ? await webhooks.findOwn(caller.id, id) : undefined;
    if (!hook) throw notFound('Webhook');
    return hook;
  }

  return {
    /** Fires for the caller's own jobs; with `collection_id`, only for those in that collection, which the caller must be able to use. */
    async create(
      caller: Caller,
      request: { url: string; events: WebhookEvent[]; collection_id?: string | null },
    ): Promise<CreatedWebhook> {
      const collectionId = request.collection_id || null;
      if (collectionId) await access.requireParticipant(caller, collectionId);
      const url = await allowedUrl(request.url);
      if ((await webhooks.count(caller.id)) >= MAX_WEBHOOKS_PER_USER) {
        throw conflict(`You have ${MAX_WEBHOOKS_PER_USER} webhooks, the most allowed; delete one first`);
      }
      const secret = newWebhookSecret();
      const row = await webhooks.insert(caller.id, { url, events: [...new Set(request.events)], collectionId, secret });
      return { ...row, secret };
    },

    /** For a secret that leaked: the old one stops signing at once, so there is no window where both verify. */
    async rotateSecret(caller: Caller, id: string): Promise<CreatedWebhook> {
      const secret = newWebhookSecret();
      const row = isUuid(id) ? await webhooks.replaceSecret(caller.id, id, secret) : undefined;
      if (!row) throw notFound('Webhook');
      return { ...row, secret };
    },

    list: (caller: Caller): Promise<WebhookRow[]> => webhooks.list(caller.id),

    async update(
      caller: Caller,
      id: string,
      changes: { url?: string; events?: WebhookEvent[]; active?: boolean },
    ): Promise<WebhookRow> {
      await own(caller, id);
      const url = changes.url === undefined ? undefined : await allowedUrl(changes.url);
      const events = changes.events && [...new Set(changes.events)];
      const row = await webhooks.update(caller.id, id, { url, events, active: changes.active });
      if (!row) throw notFound('Webhook');
      return row;
    },

    async delete(caller: Caller, id: string): Promise<string> {
      if (!isUuid(id) || !(await webhooks.delete(caller.id, id))) throw notFound('Webhook');
      return id;
    },

    async deliveries(caller: Caller, id: string, page: { limit: number; offset: number }): Promise<DeliveryRow[]> {
      await own(caller, id);
      return deliveries.list(id, page.limit, page.offset);
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
