/**
 * API keys with roles (docs/security.md): recognizing the key a request presents, and making,
 * listing and revoking stored keys. A key of `API_KEYS` is an admin key, never stored; a stored
 * key is `us_` + 43 base64url characters, of which the store keeps only the SHA-256. Every door
 * asks `authorize` with what it is about to do, and translates a `Denied` into its own `403`.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Logger } from '../log.ts';
import { digestSecret, matchesSecret } from '../secrets.ts';
import type { KeyRecord, KeyStore } from '../store/key-store.ts';
import { ENV_ADMIN, isRole, refusalFor, type Action, type Principal } from './access.ts';
import { guarded, outage, refused, type Invalid, type NotFound, type Unavailable } from './outcomes.ts';
import { codePoints, Refusal, unstorableText } from './refusal.ts';

/** The prefix of a stored key's secret: a key found in a paste or a log is recognizable as ours. */
export const SECRET_PREFIX = 'us_';
/** A stored key's name, in characters. */
export const MAX_KEY_NAME = 64;
/** A key's `last_used_at` is written at most this often, seconds. */
export const TOUCH_EVERY = 60;

/**
 * Why a request may not go on: a key that is missing where one is needed, wrong, revoked or
 * expired (no `detail`: the `403` tells nothing), or a key whose role lacks the action (`detail`
 * says which role and what).
 */
export type Denied = { ok: false; error: 'forbidden'; detail?: string };
const NO_KEY: Denied = { ok: false, error: 'forbidden' };

/** A stored key as `GET /api/keys` shows it: never the secret, nor its digest. */
export interface KeyView {
  id: string;
  name: string;
  role: KeyRecord['role'];
  domain: string | null;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
}

export const keyView = (key: KeyRecord): KeyView => ({
  id: key.id,
  name: key.name,
  role: key.role,
  domain: key.domain,
  created_at: key.createdAt,
  expires_at: key.expiresAt,
  last_used_at: key.lastUsedAt,
});

/** What `POST /api/keys` sends, as plain values (`expires_at` in Unix seconds). */
export interface KeyInput {
  name?: unknown;
  role?: unknown;
  domain?: unknown;
  expires_at?: unknown;
}

/** The clean fields of a new key, or why not (`now`: Unix seconds, for the expiry). */
export function checkKeyInput(
  input: KeyInput,
  now: number,
  hostOf: HostOf = ONLY_DEFAULT,
): Pick<KeyRecord, 'name' | 'role' | 'domain' | 'expiresAt'> | Refusal {
  const { name, role, domain, expires_at: expiresAt } = input;
  if (typeof name !== 'string' || name.trim() === '') return new Refusal('name is required: 1 to 64 characters');
  if (codePoints(name) > MAX_KEY_NAME || /[\u0000-\u001f\u007f]/.test(name)) return new Refusal('name must be 1 to 64 characters, without control characters');
  const unstorable = unstorableText(name, 'name');
  if (unstorable !== undefined) return new Refusal(unstorable);
  if (!isRole(role)) return new Refusal('role must be one of creator, viewer, editor, admin');
  // Absent or null: every domain. Else a host of this service, kept as its host (the default one's too).
  const host = domain === undefined || domain === null || domain === '' ? null : hostOf(domain);
  if (host instanceof Refusal) return host;
  if (expiresAt !== undefined && expiresAt !== null) {
    if (typeof expiresAt !== 'number' || !Number.isSafeInteger(expiresAt)) return new Refusal('expires_at must be a whole number of Unix seconds, or null');
    if (expiresAt <= now) return new Refusal('expires_at must be in the future');
  }
  return { name, role, domain: host, expiresAt: typeof expiresAt === 'number' ? expiresAt : null };
}

/** The host of a domain a key names (`Domains.hostOf`), or why it names none. */
export type HostOf = (input: unknown) => string | Refusal;

const ONLY_DEFAULT: HostOf = () => new Refusal('domain: this service has only its default domain; a key acts on it without one');

export interface KeyOptions {
  /** Absent: the store keeps no keys, and only `API_KEYS` keys exist. */
  keyStore: KeyStore | undefined;
  apiKeys: readonly string[];
  /** Unix seconds. */
  seconds: () => number;
  log: Logger;
  /** `create_access`: `key` makes every create need a key whose role may create. */
  createAccess?: 'open' | 'key';
  /** The host of a domain of this service a key may be limited to; absent: only every domain. */
  hostOf?: HostOf;
}

/** Who presented a key: `identify`, and its use recorded at most once a minute a key. */
function createIdentify({ keyStore, apiKeys, seconds, log }: KeyOptions) {
  const envDigests = apiKeys.map(digestSecret);
  /** When each key's use was last written, so that a busy key writes once a minute. */
  const touched = new Map<string, number>();

  function touch(store: KeyStore, key: KeyRecord, now: number): void {
    const last = touched.get(key.id) ?? key.lastUsedAt ?? -Infinity;
    if (now - last < TOUCH_EVERY) return;
    touched.set(key.id, now);
    store.touchKey(key.id, now).catch((err: unknown) => log.warn('could not record the use of an API key', { key: key.id, error: String(err) }));
  }

  /**
   * Who presented `presented`: the `API_KEYS` admin, a stored key that has not expired, or nobody
   * (`undefined`: no key at all). A key that is none of these is `Denied`.
   */
  async function identify(presented: string | undefined): Promise<Principal | undefined | Denied | Unavailable> {
    if (presented === undefined || presented === '') return undefined;
    const isEnv = envDigests.length > 0 && matchesSecret(presented, envDigests);
    if (keyStore === undefined) return isEnv ? ENV_ADMIN : NO_KEY;
    const keys = await guarded(() => keyStore.keys());
    // A key of API_KEYS needs no store: it still works while the stored keys cannot be read.
    if ('ok' in keys) return isEnv ? ENV_ADMIN : keys;
    const key = storedKey(keys, digestSecret(presented));
    if (isEnv) return ENV_ADMIN;
    const now = seconds();
    if (key === undefined || (key.expiresAt !== null && key.expiresAt <= now)) return NO_KEY;
    touch(keyStore, key, now);
    return key.domain === null ? { role: key.role, id: key.id } : { role: key.role, id: key.id, domain: key.domain };
  }

  return { identify, forget: (id: string) => touched.delete(id) };
}

/** The stored key whose digest is `digest`; every key is compared, always, in constant time. */
function storedKey(keys: readonly KeyRecord[], digest: Buffer): KeyRecord | undefined {
  let found: KeyRecord | undefined;
  for (const key of keys) {
    const same = key.digest.length === 64 && timingSafeEqual(digest, Buffer.from(key.digest, 'hex'));
    if (same) found = key;
  }
  return found;
}

/** A new stored key of `fields`, and its secret (shown once). */
function newKey(fields: Pick<KeyRecord, 'name' | 'role' | 'domain' | 'expiresAt'>, now: number, secret?: string): { record: KeyRecord; secret: string } {
  const chosen = secret ?? SECRET_PREFIX + randomBytes(32).toString('base64url');
  return {
    record: { ...fields, id: randomBytes(6).toString('base64url'), digest: digestSecret(chosen).toString('hex'), createdAt: now, lastUsedAt: null },
    secret: chosen,
  };
}

export function createKeys(options: KeyOptions) {
  const { keyStore, seconds, log } = options;
  const { identify, forget } = createIdentify(options);

  /**
   * The principal of `presented` when it may do `action`; else why not. `keyNeeded` false (an
   * open create): no key at all passes as `undefined`, and a key given must still be good and
   * allowed.
   */
  async function authorize(presented: string | undefined, action: Action, keyNeeded = true): Promise<Principal | undefined | Denied | Unavailable> {
    const who = await identify(presented);
    if (who === undefined) return keyNeeded ? NO_KEY : undefined;
    if ('ok' in who) return who;
    const detail = refusalFor(who, action);
    return detail === undefined ? who : { ok: false, error: 'forbidden', detail };
  }

  async function store(record: KeyRecord, quiet = false): Promise<Unavailable | undefined> {
    try {
      await keyStore!.addKey(record);
      if (!quiet) log.info('API key created', { key: record.id, role: record.role, name: record.name });
      return undefined;
    } catch (err) {
      return outage(err);
    }
  }

  return {
    identify,
    authorize,
    /** `authorize` for a create, as `create_access` says: with `open`, no key at all may create too. */
    mayCreate: (presented: string | undefined) => authorize(presented, 'create', options.createAccess === 'key'),

    /** Makes a stored key; its secret is in the answer, this once. */
    async create(input: KeyInput): Promise<{ ok: true; key: KeyView & { key: string } } | Invalid | Unavailable> {
      if (keyStore === undefined) return { ok: false, error: 'unavailable', detail: 'this store keeps no API keys' };
      const now = seconds();
      const fields = checkKeyInput(input, now, options.hostOf);
      if (fields instanceof Refusal) return refused(fields);
      const { record, secret } = newKey(fields, now);
      return (await store(record)) ?? { ok: true, key: { ...keyView(record), key: secret } };
    },

    /**
     * The first admin key (docs/security.md): when the instance has no admin key at all — none in
     * `API_KEYS`, none stored — a stored admin key named `initial`, of `secret` when given (PostgreSQL's
     * `INITIAL_API_KEY`), else a new one. Its secret, or undefined when an admin key exists already.
     */
    async initialAdmin(secret?: string): Promise<string | undefined> {
      if (keyStore === undefined || options.apiKeys.length > 0) return undefined;
      const keys = await keyStore.keys();
      // An admin for one domain manages no keys: it does not count.
      if (keys.some((k) => k.role === 'admin' && k.domain === null)) return undefined;
      const made = newKey({ name: 'initial', role: 'admin', domain: null, expiresAt: null }, seconds(), secret);
      // Quiet: start-up says it in one line, with the file that holds the secret.
      const failed = await store(made.record, true);
      if (failed !== undefined) throw new Error(failed.detail);
      return made.secret;
    },

    async list(): Promise<{ ok: true; keys: KeyView[] } | Unavailable> {
      if (keyStore === undefined) return { ok: true, keys: [] };
      const keys = await guarded(() => keyStore.keys());
      return 'ok' in keys ? keys : { ok: true, keys: keys.map(keyView) };
    },

    async revoke(id: string): Promise<{ ok: true } | NotFound | Unavailable> {
      if (keyStore === undefined) return { ok: false, error: 'not_found' };
      const gone = await guarded(() => keyStore.revokeKey(id));
      if (typeof gone !== 'boolean') return gone;
      if (!gone) return { ok: false, error: 'not_found' };
      forget(id);
      log.info('API key revoked', { key: id });
      return { ok: true };
    },
  };
}

export type Keys = ReturnType<typeof createKeys>;
