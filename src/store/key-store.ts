/**
 * The storage contract of API keys (docs/security.md, keys with roles): what a store keeps of each
 * stored key. Only the SHA-256 of a key's secret is kept; the secret itself is shown once, when the
 * key is made, and never stored, logged, listed or exported. Keys of `API_KEYS` are never stored.
 */
import type { MaybePromise } from './link-store.ts';

/** A key's role (`src/links/access.ts` has the table of what each may do). */
export type Role = 'creator' | 'viewer' | 'editor' | 'admin';

/** A stored key. Times are Unix seconds. */
export interface KeyRecord {
  /** Public, 8 characters of base64url: names the key in lists, logs and `DELETE /api/keys/<id>`. */
  readonly id: string;
  /** 1 to 64 characters. */
  readonly name: string;
  readonly role: Role;
  /** The host of the one domain the key acts on (docs/security.md, keys for one domain); null: every domain. */
  readonly domain: string | null;
  /** SHA-256 of the secret, 64 lower-case hex digits. */
  readonly digest: string;
  readonly createdAt: number;
  /** After this second the key is refused; null: never. */
  readonly expiresAt: number | null;
  /** Last request that used it, at most a minute stale; null: never used. */
  readonly lastUsedAt: number | null;
}

/**
 * Stored keys. Every write is durable before it resolves. A revoke is seen by every instance
 * sharing the store within a second; a store in one process sees it at once.
 */
export interface KeyStore {
  /** Stores a new key; `id` and `digest` are unique (the service makes them from 48 and 256 random bits). */
  addKey(key: KeyRecord): Promise<void>;
  /** Every key not revoked, oldest first (expired ones included: the list shows them). */
  keys(): MaybePromise<readonly KeyRecord[]>;
  /** Revokes the key of `id`: false when there is none. */
  revokeKey(id: string): Promise<boolean>;
  /**
   * Records that the key of `id` was used at `at`. The service calls it at most once a minute a key
   * and never on the redirect path; a key revoked meanwhile stays revoked.
   */
  touchKey(id: string, at: number): Promise<void>;
}
