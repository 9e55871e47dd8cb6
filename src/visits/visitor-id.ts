/**
 * The daily visitor id: what lets the stats count unique visitors without keeping anything that
 * names one. It is a keyed hash (HMAC-SHA-256) of the client address and the `User-Agent` under a
 * random key of the UTC day. The key is made on the day's first visit and dropped when the next
 * day's is made, so once a day is over nobody — not the operator, not whoever copies the data —
 * can recompute an id from an address, or tell that two days' ids are the same visitor. Only the
 * id is stored; the address and the `User-Agent` never are.
 *
 * The id is the hash's first 8 bytes, read as a signed 64-bit integer (a PostgreSQL `bigint`, 8
 * bytes on the log store's disk). Two visitors of one day share an id with probability about
 * n² / 2⁶⁵: for 10 million visitors a day, 3 in a million — a count of unique visitors that is
 * off by one that often is exact enough.
 *
 * A request with `Sec-GPC: 1` (Global Privacy Control) or `DNT: 1` (Do Not Track) gets no id at
 * all (`tracksVisitor`): it is still a visit, but its event keeps only the time and the bot flag.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export const DAY_MS = 86_400_000;

/** Bytes of a day's key: SHA-256's block is larger, its output this size, and more adds nothing. */
export const KEY_BYTES = 32;

/** The id of (`address`, `userAgent`) under one day's `key`. */
export function visitorId(key: Uint8Array, address: string, userAgent: string | undefined): bigint {
  // A newline cannot occur in either value (a header value holds none, an address is canonical),
  // so the pair is read back one way only: ("a", "b\nc") and ("a\nb", "c") cannot collide.
  return createHmac('sha256', key).update(`${address}\n${userAgent ?? ''}`).digest().readBigInt64BE(0);
}

/** The UTC day of `ms` (days since 1970-01-01). */
export function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

export interface DailyKeyOptions {
  /** The clock, in milliseconds (tests fake it). */
  now?: () => number;
  /** A source of random bytes (tests make it predictable). */
  random?: (size: number) => Uint8Array;
}

/**
 * The key of the current UTC day, kept in memory only: the log store's. A restart mid-day makes a
 * new key, so that day may count a returning visitor twice (the price of never writing the key).
 */
export function createDailyKeys(options: DailyKeyOptions = {}): () => { day: number; key: Uint8Array } {
  const now = options.now ?? Date.now;
  const random = options.random ?? randomBytes;
  let current: { day: number; key: Uint8Array } | undefined;
  return function todaysKey() {
    const day = utcDay(now());
    // Only the current day's key is kept: the previous one is dropped here, with the object.
    if (current === undefined || current.day !== day) current = { day, key: random(KEY_BYTES) };
    return current;
  };
}

/**
 * The daily visitor ids of one process: `(address, userAgent)` → today's id, or `null` when there
 * is no address to hash (the client address could not be told, client-address.ts).
 */
export function createVisitorIds(options: DailyKeyOptions = {}): (address: string | null, userAgent: string | undefined) => bigint | null {
  const todaysKey = createDailyKeys(options);
  return function dailyVisitorId(address, userAgent) {
    return address === null ? null : visitorId(todaysKey().key, address, userAgent);
  };
}

/** True unless the request asks not to be tracked (`Sec-GPC: 1` or `DNT: 1`). */
export function tracksVisitor(headers: IncomingHttpHeaders): boolean {
  return !(isOne(headers['sec-gpc']) || isOne(headers['dnt']));
}

/** A header that says `1`; node:http joins repeats with ", ", so "1, 1" says it too. */
function isOne(value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  if (value === '1') return true;
  const text = typeof value === 'string' ? value : value.join(',');
  return text.split(',').some((part) => part.trim() === '1');
}
