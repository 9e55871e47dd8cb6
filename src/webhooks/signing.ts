/**
 * Signing a delivery the way the Standard Webhooks specification (standardwebhooks.com, version
 * 1.0.0) says, so a receiver verifies it with any of that project's libraries and nothing of ours:
 * the secret is `whsec_` + base64 of its key bytes; the signed content is `id.timestamp.body`; the
 * signature is `v1,` + base64 of HMAC-SHA256 under the key bytes (not under the `whsec_` text); the
 * three `webhook-*` headers carry id, timestamp and signature.
 *
 * A bad secret, id or timestamp here is a bug of the caller (each comes from this service, never
 * from a request), so it throws; the message never holds the secret, since an error may be logged.
 */
import { createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** Bytes of a secret's key: 192 bits, more than any brute force reaches. */
export const SECRET_BYTES = 24;

/**
 * Exactly what `newSecret` makes: 24 bytes are 32 base64 characters with no padding. Stricter than
 * the specification on purpose: Node's base64 decoder skips characters it does not know, so a
 * looser check would let a damaged secret sign with other key bytes than the receiver holds.
 */
const SECRET_SHAPE = /^whsec_[A-Za-z0-9+/]{32}$/;

/**
 * The message id may not hold a `.`: it is the delimiter of the signed content, and an id with one
 * could make two different (id, timestamp, body) triples sign the same text.
 */
const ID_SHAPE = /^[A-Za-z0-9_-]{1,128}$/;

/** A new signing secret, shown once when a subscription is made. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** Whether `s` is a secret as `newSecret` makes them. */
export function isSecret(s: unknown): s is string {
  return typeof s === 'string' && SECRET_SHAPE.test(s);
}

/** `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}` (UTF-8) under the secret's key bytes. */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  if (!isSecret(secret)) throw new TypeError(`a webhook secret must be "${SECRET_PREFIX}" and the base64 of ${SECRET_BYTES} bytes`);
  if (!ID_SHAPE.test(id)) throw new TypeError('a webhook message id must be 1 to 128 letters, digits, "_" or "-"');
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new RangeError('a webhook timestamp must be whole Unix seconds');
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * The key of a secret, made once: a busy subscription signs thousands of deliveries a second with
 * one secret, and decoding it and preparing its key each time was a tenth of a delivery's work.
 * Bounded: subscriptions are few (at most 100), and a full cache is simply emptied.
 */
const keys = new Map<string, KeyObject>();
function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (key === undefined) {
    if (keys.size >= 256) keys.clear();
    key = createSecretKey(Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64'));
    keys.set(secret, key);
  }
  return key;
}

/**
 * The headers of one delivery attempt, as pairs in the order they are sent. `timestamp` is the
 * attempt's time (Unix seconds), not the event's: each retry is signed anew, so a receiver's
 * replay window (five minutes in the official libraries) judges the attempt it is reading.
 */
export function deliveryHeaders(secret: string, id: string, timestamp: number, body: string): [name: string, value: string][] {
  return [
    ['webhook-id', id],
    ['webhook-timestamp', String(timestamp)],
    ['webhook-signature', signature(secret, id, timestamp, body)],
    ['content-type', 'application/json'],
  ];
}

// Event ids are the outbox's: a store makes them with the rows it writes.
export { newEventId } from '../store/webhook-store.ts';
