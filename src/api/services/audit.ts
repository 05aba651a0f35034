import type { Caller } from '#core/caller.ts';
import type { AuditRepo, AuditRow } from '#core/db/audit-log.ts';
import type { Logger } from '#core/log.ts';
import type { AccessService } from './access.ts';

/** Every action the audit log records, as `<target>.<what happened>`. */
export const AUDIT_ACTIONS = [
  'api_key.created',
  'api_key.revoked',
  'share.created',
  'share.revoked',
  'share.joined',
  'member.removed',
  'collection.created',
  'collection.deleted',
  'collection.config_changed',
  'collection.rechunked',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'source.created',
  'source.removed',
  'document.deleted',
  'job.retried',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDIT_TARGETS = ['api_key', 'share', 'user', 'collection', 'webhook', 'source', 'document', 'job'] as const;

export interface AuditTarget {
  type: (typeof AUDIT_TARGETS)[number];
  id: string;
  /** The collection it belongs to, where there is one: its owner reads the entry. */
  collectionId?: string | null;
}

/** The request an action came in: every entry it writes carries these. */
export interface RequestOrigin {
  requestId: string;
  /** CF-Connecting-IP, which Cloudflare sets on every request; null outside Cloudflare without it. */
  clientAddress: string | null;
}

/**
 * Records one action after it succeeded. `diff` holds what was set or changed (see `changes`), never a key,
 * a secret, a share token or a password: each service picks its fields by name.
 */
export type Audit = (caller: Caller, action: AuditAction, target: AuditTarget, diff?: Record<string, unknown>) => Promise<void>;

/**
 * The `audit` dependency of the services, bound to one request. The action has already happened when this
 * runs, so a failed write does not fail the request (a client told 500 would repeat a creation that
 * succeeded); it is logged with everything but the diff, for an operator to see the gap.
 */
export function createAudit(repo: AuditRepo, origin: RequestOrigin, log: Logger): Audit {
  return async (caller, action, target, diff = {}) => {
    const entry = {
      actor_id: caller.id,
      api_key_id: caller.key?.id ?? null,
      request_id: origin.requestId,
      client_address: origin.clientAddress,
      action,
      target_type: target.type,
      target_id: target.id,
      collection_id: target.collectionId ?? null,
      diff,
    };
    try {
      await repo.insert(entry);
    } catch (error) {
      log.error('audit_entry_not_written', error, {
        action: entry.action,
        actor_id: entry.actor_id,
        api_key_id: entry.api_key_id,
        target_type: entry.target_type,
        target_id: entry.target_id,
      });
    }
  };
}

/** `{field: {from, to}}` for each of `fields` whose value differs between `before` and `after`. */
export function changes<T extends object>(before: T, after: T, fields: readonly (keyof T & string)[]) {
  const diff: Record<string, { from: unknown; to: unknown }> = {};
  for (const field of fields) {
    const from = before[field] ?? null;
    const to = after[field] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) diff[field] = { from, to };
  }
  return diff;
}

/**
 * A webhook receiver's address as the log keeps it: its origin only. The path and query of a receiver's URL
 * are often its credential (a chat service's incoming-webhook URL is a secret), and the log never holds one.
 */
export function receiverOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

/** An entry as read: its action and target type are among those this service writes. */
export type AuditEntryView = Omit<AuditRow, 'action' | 'target_type'> & { action: AuditAction; target_type: AuditTarget['type'] };

export interface AuditListQuery {
  collection_id?: string;
  action?: AuditAction;
  since?: string;
  until?: string;
  limit: number;
  offset: number;
}

/**
 * Who reads what: a collection's entries (`collection_id`) its owner and an admin; without one, a user their own
 * entries (those they made) and an admin everyone's (a deleted collection's among them). A collection that does
 * not exist is 404 to everyone, as on every collection route.
 */
export function createAuditService(deps: { repo: AuditRepo; access: AccessService }) {
  const { repo, access } = deps;
  return {
    async list(caller: Caller, query: AuditListQuery): Promise<AuditEntryView[]> {
      const filters = { action: query.action, since: query.since, until: query.until, limit: query.limit, offset: query.offset };
      if (query.collection_id !== undefined) {
        const collection = caller.isAdmin
          ? await access.requireAdmin(caller, query.collection_id)
          : await access.requireOwner(caller, query.collection_id);
        return (await repo.list({ ...filters, collectionId: collection.id })) as AuditEntryView[];
      }
      return (await repo.list(caller.isAdmin ? filters : { ...filters, actorId: caller.id })) as AuditEntryView[];
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
