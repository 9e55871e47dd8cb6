/**
 * The log entries of stored API keys (format 5, docs/storage.md), as pure functions: an entry's
 * payload and back. The line around a payload (checksum, newline) is `format.ts`'s.
 *
 *   A <id> <role> <created_at> <expires_at> <last_used_at> <digest> <[name, domain]>
 *                                         a key added, whole (compaction writes one per key, as it is now)
 *   W <id>                                a key revoked (withdrawn)
 *   U <id> <at>                           a key used at `at` (its `last_used_at`)
 *
 * Times are Unix seconds, `-` for none (a key that never expires, or was never used): a second
 * cannot be `-`, so no number is taken to mean none. The name and the domain are the JSON array
 * `[name, domain]` (the domain null for the default one): JSON escapes any tab or line break, so
 * the field needs no escaping of its own. Only the secret's SHA-256 is in the log, never the secret.
 *
 * A key's entries are few (one when it is made, one a minute at most while it is used): they are
 * read as text at start-up, and the last entry for a key wins. A use or a revoke of a key that is
 * not there (revoked already, or never added) changes nothing.
 */
import type { KeyRecord, Role } from '../key-store.ts';
import { isRecordInteger, MAX_COUNT, MAX_DIGITS } from '../record-limits.ts';

export type KeyEntry = { op: 'A'; key: KeyRecord } | { op: 'W'; id: string } | { op: 'U'; id: string; at: number };

export const KEY_OPS: ReadonlySet<string> = new Set(['A', 'W', 'U']);

const ROLES: ReadonlySet<string> = new Set<Role>(['creator', 'viewer', 'editor', 'admin']);
/** A key's id: base64url, as the service makes them (8 characters); at most 64. */
const ID = /^[A-Za-z0-9_-]{1,64}$/;
const DIGEST = /^[0-9a-f]{64}$/;
const INT = new RegExp(`^(0|[1-9]\\d{0,${MAX_DIGITS - 1}})$`);
const NONE = '-';

/** The payload of a key's entry. */
export function keyPayload(entry: KeyEntry): string {
  switch (entry.op) {
    case 'A': {
      const { id, role, createdAt, expiresAt, lastUsedAt, digest, name, domain } = entry.key;
      return `A\t${id}\t${role}\t${createdAt}\t${expiresAt ?? NONE}\t${lastUsedAt ?? NONE}\t${digest}\t${JSON.stringify([name, domain])}`;
    }
    case 'W':
      return `W\t${entry.id}`;
    case 'U':
      return `U\t${entry.id}\t${entry.at}`;
  }
}

const time = (n: number | null): boolean => n === null || isRecordInteger(n);

/** Whether every field of `entry` is one `decodeKeyFields` reads back as it is. */
export function keyWritable(entry: KeyEntry): boolean {
  if (entry.op === 'W') return ID.test(entry.id);
  if (entry.op === 'U') return ID.test(entry.id) && isRecordInteger(entry.at);
  const { id, role, createdAt, expiresAt, lastUsedAt, digest, name, domain } = entry.key;
  return (
    ID.test(id) &&
    ROLES.has(role) &&
    isRecordInteger(createdAt) &&
    time(expiresAt) &&
    time(lastUsedAt) &&
    DIGEST.test(digest) &&
    typeof name === 'string' &&
    (domain === null || typeof domain === 'string')
  );
}

/** A number field, or -1. */
function int(text: string | undefined): number {
  if (text === undefined || !INT.test(text)) return -1;
  const n = Number(text);
  return n <= MAX_COUNT ? n : -1;
}

/** A time field: its second, null for `-`, or undefined when it is neither. */
function timeField(text: string | undefined): number | null | undefined {
  if (text === NONE) return null;
  const n = int(text);
  return n < 0 ? undefined : n;
}

/** The `[name, domain]` field, or undefined. */
function names(text: string): { name: string; domain: string | null } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [name, domain] = value as unknown[];
  if (typeof name !== 'string' || (domain !== null && typeof domain !== 'string')) return undefined;
  return { name, domain };
}

/** A key's entry from its payload's tab-separated fields, or undefined when it is none. */
export function decodeKeyFields(f: readonly string[]): KeyEntry | undefined {
  const id = f[1];
  if (id === undefined || !ID.test(id)) return undefined;
  switch (f[0]) {
    case 'W':
      return f.length === 2 ? { op: 'W', id } : undefined;
    case 'U': {
      const at = int(f[2]);
      return f.length === 3 && at >= 0 ? { op: 'U', id, at } : undefined;
    }
    case 'A': {
      if (f.length !== 8) return undefined;
      const [, , role, created, expires, used, digest, text] = f as [string, string, string, string, string, string, string, string];
      const createdAt = int(created);
      const expiresAt = timeField(expires);
      const lastUsedAt = timeField(used);
      const named = names(text);
      if (!ROLES.has(role) || createdAt < 0 || expiresAt === undefined || lastUsedAt === undefined || !DIGEST.test(digest) || named === undefined)
        return undefined;
      return { op: 'A', key: { id, name: named.name, role: role as Role, domain: named.domain, digest, createdAt, expiresAt, lastUsedAt } };
    }
    default:
      return undefined;
  }
}
