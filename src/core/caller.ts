/** What an API key may be limited to (api_keys.scopes); a route names the one it needs. */
export const SCOPES = ['query', 'ingest', 'collections:read', 'collections:write'] as const;
export type Scope = (typeof SCOPES)[number];

/** What an API key adds to its owner's identity: it may do less, never more. */
export interface KeyGrant {
  id: string;
  scopes: readonly Scope[];
  /** The one collection the key may use; null: every collection its owner may use. */
  collectionId: string | null;
}

/**
 * Who is calling: from a verified access token, or from an API key, which authenticates as its owner
 * (`id`) limited by `key`. `id` is the token's `sub` or the key owner's id.
 */
export interface Caller {
  id: string;
  email: string | null;
  /** Only from a token: a key never carries its owner's operator rights. */
  isAdmin: boolean;
  /** Null for a bearer token. */
  key: KeyGrant | null;
}
