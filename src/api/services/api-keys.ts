import type { Caller, Scope } from '#core/caller.ts';
import type { ApiKeyRepo, ApiKeyRow } from '#core/db/api-keys.ts';
import { isUuid } from '#core/db/client.ts';
import { conflict, DomainError, invalid, notFound } from '#core/errors.ts';
import { MAX_API_KEYS_PER_USER } from '#core/limits.ts';
import type { Logger } from '#core/log.ts';
import { randomToken, sha256Hex } from '#core/secrets.ts';
import type { AccessService } from './access.ts';
import type { Audit } from './audit.ts';

/** `rag_` and 256 random bits, base64url: the `<KEY_PREFIX>_<RANDOM>` of the contract. */
export const KEY_PREFIX = 'rag';
const KEY_SHAPE = /^rag_[A-Za-z0-9_-]{43}$/;
/** Characters kept in clear so that owners can tell keys apart: the prefix and 48 of the 256 bits. */
const SHOWN_CHARACTERS = 12;

export interface NewKeyRequest {
  name: string;
  scopes: Scope[];
  collection_id?: string | null;
  /** ISO 8601; must lie in the future. */
  expires_at?: string | null;
}

/** The key itself is in this answer only: the service keeps its SHA-256. */
export type CreatedKey = ApiKeyRow & { key: string };

export function createApiKeyService(deps: { keys: ApiKeyRepo; access: AccessService; audit: Audit; log: Logger }) {
  const { keys, access, audit, log } = deps;
  return {
    /**
     * A key may be restricted to a collection its owner may use now; it can never give more than the owner
     * has. A user holds at most MAX_API_KEYS_PER_USER active keys (409 past it).
     */
    async create(caller: Caller, request: NewKeyRequest): Promise<CreatedKey> {
      const expiresAt = request.expires_at ?? null;
      if (expiresAt !== null && Date.parse(expiresAt) <= Date.now())
        throw invalid('expires_at', 'expires_at must be in the future');
      const collectionId = request.collection_id || null;
      if (collectionId) await access.requireParticipant(caller, collectionId);
      const key = `${KEY_PREFIX}_${randomToken(32)}`;
      const row = await keys.insertWithin(
        caller.id,
        {
          name: request.name,
          prefix: key.slice(0, SHOWN_CHARACTERS),
          keyHash: await sha256Hex(key),
          scopes: [...new Set(request.scopes)],
          collectionId,
          expiresAt,
        },
        MAX_API_KEYS_PER_USER,
      );
      if (!row) {
        throw conflict(
          `You already hold ${MAX_API_KEYS_PER_USER} active API keys, the most one user may hold: revoke one you no longer use (DELETE /keys/{id}) first`,
        );
      }
      await audit(
        caller,
        'api_key.created',
        { type: 'api_key', id: row.id, collectionId: row.collection_id },
        { name: row.name, scopes: row.scopes, collection_id: row.collection_id, expires_at: row.expires_at },
      );
      return { ...row, key };
    },

    list: (caller: Caller): Promise<ApiKeyRow[]> => keys.list(caller.id),

    async revoke(caller: Caller, id: string): Promise<string> {
      if (!isUuid(id) || !(await keys.revoke(caller.id, id))) throw notFound('API key');
      await audit(caller, 'api_key.revoked', { type: 'api_key', id: id.toLowerCase() });
      return id;
    },

    /**
     * The caller an `X-API-Key` stands for, or the contract's 401. `last_used_at` is written at most once
     * a minute, after the response (`background`).
     */
    async authenticate(presented: string, background: (work: Promise<unknown>) => void): Promise<Caller> {
      const found = KEY_SHAPE.test(presented) ? await keys.findByHash(await sha256Hex(presented)) : undefined;
      if (!found) throw new DomainError('invalid_api_key', 'Invalid API key');
      if (found.revoked) throw new DomainError('api_key_revoked', 'API key revoked');
      if (found.expired) throw new DomainError('api_key_expired', 'API key expired');
      if (found.stale_use) {
        background(
          keys
            .markUsed(found.id)
            .catch((error: unknown) => log.error('key_last_used_not_written', error, { api_key_id: found.id })),
        );
      }
      return {
        id: found.user_id,
        email: null,
        isAdmin: false,
        key: { id: found.id, scopes: found.scopes, collectionId: found.collection_id },
      };
    },
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
