/**
 * The daily visitor id: what lets the stats count unique visitors without keeping anything that
 * names one. It is a keyed hash (HMAC-SHA-256, `visitorId`) of the client address and the
 * `User-Agent` under a random key of the UTC day. The key is made on the day's first visit and dropped when the next
 * day's is made, so once a day is over nobody — not the operator, not whoever copies the data —
 * can recompute an id from an address, or tell that two days' ids are the same visitor. Only the
 * id is stored; the address and the `User-Agent` never are.
 *
 * The id is a signed 32-bit integer: a PostgreSQL `integer`,
 * one word of the log store's packed event (packed.ts). Two of a day's n visitors share an id with
 * probability about n² / 2³³: for 100,000 visitors a day, about one pair shares an id, and the
 * count of unique visitors is one short — exact enough for a count that was never meant to be a
 * census, and it keeps an event small.
 *
 * The key of a store that instances share (PostgreSQL, `LinkStore.dailyKey`) comes from the store,
 * so every instance gives one visitor one id; the log store's lives in this process's memory only.
 *
 * A request with `Sec-GPC: 1` (Global Privacy Control) or `DNT: 1` (Do Not Track) gets no id at
 * all (`tracksVisitor`): it is still a visit, but its event keeps only the time and the bot flag.
 */
import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export const DAY_MS = 86_400_000;

/** Bytes of a day's key: SHA-256's block is larger, its output this size, and more adds nothing. */
export const KEY_BYTES = 32;

/**
 * The id of (`address`, `userAgent`) under one day's `key` (a `KeyObject` of it is cheaper to
 * reuse): each value's own keyed hash (the first 4 bytes of HMAC-SHA-256 of a tag and the value),
 * mixed into one number. Hashing the two apart is what lets a process remember each value's hash
 * (`RecentIds`): a site's clients are a few thousand `User-Agent`s and its visitors' addresses,
 * not every pairing of them. Without the day's key neither hash can be computed, so neither can
 * the id; for one `User-Agent`, distinct addresses' hashes never mix to one id (the mix is a
 * bijection of the address's hash). The recorder keeps each value's hash for the day with the
 * rest of what it knows of the value (client-facts.ts).
 */
export function visitorId(key: Uint8Array | KeyObject, address: string, userAgent: string | undefined): number {
  return mixIds(addressHash(key, address), agentHash(key, userAgent));
}

/** The keyed hash of an address, one half of `visitorId`. */
export function addressHash(key: Uint8Array | KeyObject, address: string): number {
  return valueHash(key, ADDRESS_TAG, address);
}

/** The keyed hash of a `User-Agent` (none hashes as empty), the other half of `visitorId`. */
export function agentHash(key: Uint8Array | KeyObject, userAgent: string | undefined): number {
  return valueHash(key, AGENT_TAG, userAgent ?? '');
}

/** The tags that keep an address's hash apart from a `User-Agent`'s of the same text. */
const ADDRESS_TAG = 'address\n';
const AGENT_TAG = 'user-agent\n';

function valueHash(key: Uint8Array | KeyObject, tag: string, value: string): number {
  return createHmac('sha256', key).update(tag).update(value).digest().readInt32BE(0);
}

/** Two 32-bit hashes as one (murmur3's finalizer over their combination): for a fixed `agent`, a bijection of `address`. */
export function mixIds(address: number, agent: number): number {
  let h = (address ^ Math.imul(agent, 0x9e3779b1)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

/** The UTC day of `ms` (days since 1970-01-01). */
export function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

interface DailyKeyOptions {
  /** The clock, in milliseconds (tests fake it). */
  now?: () => number;
  /** A source of random bytes (tests make it predictable). */
  random?: (size: number) => Uint8Array;
}

/**
 * The key of the current UTC day, kept in memory only: the log store's. A restart mid-day makes a
 * new key, so that day may count a returning visitor twice (the price of never writing the key).
 */
export function createDailyKeys(options: DailyKeyOptions = {}): (ms?: number) => { day: number; key: Uint8Array } {
  const now = options.now ?? Date.now;
  const random = options.random ?? randomBytes;
  let current: { day: number; key: Uint8Array } | undefined;
  return function todaysKey(ms = now()) {
    const day = utcDay(ms);
    // Only the current day's key is kept: the previous one is dropped here, with the object.
    if (current === undefined || current.day !== day) current = { day, key: random(KEY_BYTES) };
    return current;
  };
}

/** A UTC day and its key, as a `KeyObject` (`createHmac` then skips importing the raw key). */
interface DayKey {
  day: number;
  key: KeyObject;
}

/** The daily visitor ids: `(address, userAgent)` → today's id, or `null` without an address. */
export interface VisitorIds {
  (address: string | null, userAgent: string | undefined): number | null;
  /**
   * The current day's key, or undefined while it is not at hand (a shared key being fetched: the
   * fetch starts, as for an id). What the recorder hashes with (client-facts.ts). `ms`: the
   * time, when the caller has read the clock already.
   */
  key(ms?: number): DayKey | undefined;
  /**
   * Undefined when the key of the current day is at hand; else a promise that settles once it is
   * (a shared key being fetched from the store). An id asked before gets `null`.
   */
  ready(): Promise<void> | undefined;
}

interface VisitorIdOptions extends DailyKeyOptions {
  /**
   * The shared key of a UTC day (`LinkStore.dailyKey`), for a store that instances share; without
   * it the key is this process's own (`createDailyKeys`).
   */
  sharedKey?: ((day: number) => Promise<Uint8Array>) | undefined;
  /** Told why a shared key could not be had (it is asked again on the next visit). */
  onKeyError?: (err: unknown) => void;
}

/**
 * The daily visitor ids of one process: `(address, userAgent)` → today's id, or `null` when there
 * is no address to hash (the client address could not be told, client-address.ts).
 *
 * A shared key is asked of the store once per day per process and kept (only the current day's);
 * until it arrives, `ready()` is the promise to wait for: the redirect of a database is async
 * anyway, so its first counted visit of the day waits one round trip, and no other does.
 */
export function createVisitorIds(options: VisitorIdOptions = {}): VisitorIds {
  const now = options.now ?? Date.now;
  const { sharedKey } = options;
  const ids = (key: (ms?: number) => DayKey | undefined): ((address: string | null, userAgent: string | undefined) => number | null) =>
    function dailyVisitorId(address: string | null, userAgent: string | undefined): number | null {
      if (address === null) return null;
      const today = key();
      return today === undefined ? null : visitorId(today.key, address, userAgent);
    };
  if (sharedKey === undefined) {
    const todaysKey = createDailyKeys(options);
    let keyed: DayKey | undefined;
    const ownKey = (ms?: number): DayKey => {
      const today = todaysKey(ms);
      if (keyed === undefined || keyed.day !== today.day) keyed = { day: today.day, key: createSecretKey(today.key) };
      return keyed;
    };
    return Object.assign(ids(ownKey), { key: ownKey, ready: (): undefined => undefined });
  }
  let current: DayKey | undefined;
  let fetching: { day: number; done: Promise<void> } | undefined;
  function ready(): Promise<void> | undefined {
    const day = utcDay(now());
    if (current?.day === day) return undefined;
    if (fetching?.day === day) return fetching.done;
    const done = sharedKey!(day).then(
      (key) => {
        // Only the current day's is kept: the previous one is dropped with this object.
        if (current === undefined || current.day < day) current = { day, key: createSecretKey(key) };
      },
      (err: unknown) => options.onKeyError?.(err),
    );
    // Asked again on the next visit if it failed.
    fetching = { day, done: done.then(() => void (fetching = undefined)) };
    return fetching.done;
  }
  function sharedDayKey(ms = now()): DayKey | undefined {
    const day = utcDay(ms);
    if (current?.day === day) return current;
    // Not fetched yet (the caller did not wait for `ready`, or midnight passed since): no id
    // rather than an id under another day's key, and the fetch starts.
    void ready();
    return undefined;
  }
  return Object.assign(ids(sharedDayKey), { key: sharedDayKey, ready });
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
