/**
 * Stored API keys for the door tests (docs/security.md, keys with roles): one key of `API_KEYS`
 * that makes the others over `POST /api/keys`, and the refusal sentences each door must carry,
 * written out here rather than read from the service, so a changed sentence fails the tests.
 */
import assert from 'node:assert/strict';
import { onOneProcess } from './cluster.ts';
import type { Harness } from './helpers.ts';

/** The `API_KEYS` key of these tests: an admin key, never stored. */
export const ADMIN = 'env-admin-key';
/** The tests make a key and use it at once; on several instances a new key reaches the others within a second, checked at the store. */
export const ONE = onOneProcess('a key made on one instance reaches the others within a second, checked at the store');
export const ROLES = ['creator', 'viewer', 'editor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** A stored key as `POST /api/keys` answers it, the secret in `key`. */
export interface MadeKey {
  id: string;
  name: string;
  role: string;
  domain: null;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  key: string;
}

/** A stored key of `role`, made with the `ADMIN` key; `extra` adds or replaces fields of the request. */
export async function makeKey(h: Pick<Harness, 'req'>, role: string, extra: Record<string, unknown> = {}): Promise<MadeKey> {
  const res = await h.req('/api/keys', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': ADMIN },
    body: JSON.stringify({ name: `${role} key`, role, ...extra }),
  });
  assert.equal(res.status, 201, res.body);
  return JSON.parse(res.body) as MadeKey;
}

/** The refusal of a role too low, in the service's words. */
export const denied = (role: string, what: string) => `this key's role (${role}) does not allow ${what}`;
export const CREATE = 'creating links';
export const READ = 'reading links, their stats or their visits';
export const LIST = 'listing, searching or exporting links';
export const READ_ALL = "reading the whole instance's stats";
export const EDIT = 'editing or deleting links';
