import { checkUrl, type ResolveHost } from './dns.ts';
import { isTrustedOrigin, REFUSAL_MESSAGES, type UrlVerdict } from './url-policy.ts';

export interface ReceiverOrigins {
  /** WEBHOOK_TRUSTED_ORIGINS: the only origins a receiver may use past the public-address rule. */
  webhook: readonly string[];
  /** INGEST_TRUSTED_ORIGINS: trusted to be read, and for that reason never a receiver unless listed above too. */
  ingest: readonly string[];
}

/**
 * Where a webhook may be POSTed: the URL-ingestion address rules, with WEBHOOK_TRUSTED_ORIGINS as
 * the only exemptions. An origin trusted for URL ingestion is refused outright, whatever it
 * resolves to, unless the operator lists it for webhooks as well: ingestion GETs the pages users
 * name there, while a webhook would let any user POST to any path of it and read the status code
 * and timing back from the deliveries list. Checked at registration and again at every delivery,
 * so taking an origin off WEBHOOK_TRUSTED_ORIGINS stops the deliveries already queued for it.
 * Throws DnsError, as checkUrl does, when the resolver itself fails.
 */
export async function checkReceiverUrl(
  raw: string,
  options: { resolve: ResolveHost; origins: ReceiverOrigins },
): Promise<UrlVerdict> {
  const { webhook, ingest } = options.origins;
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (url && isTrustedOrigin(url, ingest) && !isTrustedOrigin(url, webhook)) {
    return { ok: false, reason: REFUSAL_MESSAGES.ingest_only, code: 'ingest_only' };
  }
  return checkUrl(raw, { resolve: options.resolve, trustedOrigins: webhook });
}
