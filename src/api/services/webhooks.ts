import type { Caller } from '#core/caller.ts';
import { isUuid } from '#core/db/client.ts';
import type { DeliveryRepo, DeliveryRow } from '#core/db/webhook-deliveries.ts';
import type { WebhookRepo, WebhookRow } from '#core/db/webhooks.ts';
import { conflict, invalid, notFound } from '#core/errors.ts';
import type { UrlVerdict } from '#core/urls/url-policy.ts';
import type { WebhookEvent } from '#core/webhooks/payload.ts';
import { newWebhookSecret } from '#core/webhooks/signing.ts';
import type { AccessService } from './access.ts';
import { type Audit, changes, receiverOrigin } from './audit.ts';

/** Registrations per user: every job's ending fans out to each of them. */
export const MAX_WEBHOOKS_PER_USER = 20;

export interface WebhookDeps {
  webhooks: WebhookRepo;
  deliveries: DeliveryRepo;
  access: AccessService;
  audit: Audit;
  /** The receiver address policy (src/core/urls/receiver-policy.ts). */
  checkUrl: (url: string) => Promise<UrlVerdict>;
}

/** The signing secret is in this answer only. */
export type CreatedWebhook = WebhookRow & { secret: string };

export function createWebhookService(deps: WebhookDeps) {
  const { webhooks, deliveries, access, audit } = deps;

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
      await audit(caller, 'webhook.created', webhookTarget(row), {
        url_origin: receiverOrigin(row.url),
        events: row.events,
        collection_id: row.collection_id,
      });
      return { ...row, secret };
    },

    /** For a secret that leaked: the old one stops signing at once, so there is no window where both verify. */
    async rotateSecret(caller: Caller, id: string): Promise<CreatedWebhook> {
      const secret = newWebhookSecret();
      const row = isUuid(id) ? await webhooks.replaceSecret(caller.id, id, secret) : undefined;
      if (!row) throw notFound('Webhook');
      await audit(caller, 'webhook.secret_rotated', webhookTarget(row));
      return { ...row, secret };
    },

    list: (caller: Caller): Promise<WebhookRow[]> => webhooks.list(caller.id),

    async update(
      caller: Caller,
      id: string,
      requested: { url?: string; events?: WebhookEvent[]; active?: boolean },
    ): Promise<WebhookRow> {
      const before = await own(caller, id);
      const url = requested.url === undefined ? undefined : await allowedUrl(requested.url);
      const events = requested.events && [...new Set(requested.events)];
      const row = await webhooks.update(caller.id, id, { url, events, active: requested.active });
      if (!row) throw notFound('Webhook');
      // The address by its origin; that its path or query changed is all the log says of them.
      const shown = (hook: WebhookRow) => ({ ...hook, url: receiverOrigin(hook.url) });
      await audit(caller, 'webhook.updated', webhookTarget(row), {
        ...changes(shown(before), shown(row), ['url', 'events', 'active']),
        ...(before.url !== row.url ? { url_changed: true } : {}),
      });
      return row;
    },

    async delete(caller: Caller, id: string): Promise<string> {
      const hook = isUuid(id) ? await webhooks.findOwn(caller.id, id) : undefined;
      if (!hook || !(await webhooks.delete(caller.id, id))) throw notFound('Webhook');
      await audit(caller, 'webhook.deleted', webhookTarget(hook), { url_origin: receiverOrigin(hook.url), events: hook.events });
      return id;
    },

    async deliveries(caller: Caller, id: string, page: { limit: number; offset: number }): Promise<DeliveryRow[]> {
      await own(caller, id);
      return deliveries.list(id, page.limit, page.offset);
    },
  };
}

function webhookTarget(hook: WebhookRow) {
  return { type: 'webhook' as const, id: hook.id, collectionId: hook.collection_id };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
