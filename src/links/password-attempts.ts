/**
 * Wrong passwords of protected links, limited (docs/api.md, password-protected links): 5 wrong
 * attempts a minute per link and client address, then `429` with `Retry-After` until that minute
 * has passed. The redirect asks `check` before it verifies anything, so a limited guesser costs
 * no scrypt at all, and tells `failed` or `passed` after.
 *
 * A fixed window per pair, as the create limit's (create-limit.ts): it opens at the pair's first
 * wrong attempt, counts `limit` of them, and refuses every attempt after the last until it ends;
 * the refusal says when that is, in whole seconds rounded up, so waiting that long always works.
 * Pairs are kept in a Map in the order their windows opened, so the ended ones are at its front and
 * each call drops those it finds there. No timer: the clock is injected and nothing runs between
 * calls.
 *
 * Memory is bounded: at most `maxEntries` pairs (10,000 by default, a megabyte or two). An attacker
 * who cycles through addresses, or through links, cannot grow the process: past the bound each new
 * pair evicts the oldest window. It could free a window of its own that way, but only by making
 * `maxEntries` other wrong attempts, each one a scrypt verification, which takes far longer than
 * the minute it would save.
 *
 * The count is this process's own, like the create limit's: instances sharing a database each keep
 * their own windows.
 */
import { limitKey } from './create-limit.ts';

export interface PasswordAttemptsOptions {
  /** The service clock, milliseconds. */
  now: () => number;
  /** Wrong attempts a window admits (default 5). */
  limit?: number;
  /** The window's length, milliseconds (default one minute). */
  windowMs?: number;
  /** Pairs kept at most (default 10,000). */
  maxEntries?: number;
}

export type AttemptVerdict = { ok: true } | { ok: false; retryAfter: number };

/** A pair's window: when its first wrong attempt came, and how many came since. */
interface Window {
  readonly opened: number;
  count: number;
}

const ADMITTED: AttemptVerdict = { ok: true };

/** `option` when given, after checking it is a whole number of at least 1. */
function whole(name: string, option: number | undefined, fallback: number): number {
  if (option === undefined) return fallback;
  if (!Number.isSafeInteger(option) || option < 1) throw new RangeError(`${name} must be a whole number of at least 1, not ${option}`);
  return option;
}

/**
 * Whom the attempts count against: the client's address as `trust_proxy` found it, an IPv6 client
 * by its /64 (create-limit.ts `limitKey`), since one subscriber may pick any address of its /64.
 * An address already in that form stays as it is, so a caller that grouped it first is not
 * collapsed into one shared `unknown`.
 */
function clientKey(address: string): string {
  return address.endsWith('::/64') ? address : limitKey(address);
}

/**
 * One key per pair. The link's length comes first, so no link and address can spell another
 * pair's key, whatever characters either holds.
 */
function pairKey(link: string, address: string): string {
  return `${link.length}:${link}${clientKey(address)}`;
}

export class PasswordAttempts {
  readonly #now: () => number;
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #maxEntries: number;
  readonly #windows = new Map<string, Window>();

  constructor(options: PasswordAttemptsOptions) {
    this.#now = options.now;
    this.#limit = whole('limit', options.limit, 5);
    this.#windowMs = whole('windowMs', options.windowMs, 60_000);
    this.#maxEntries = whole('maxEntries', options.maxEntries, 10_000);
  }

  /** Pairs with an open window (tests: memory stays bounded). */
  get size(): number {
    return this.#windows.size;
  }

  /**
   * Asked before a password is verified: `ok`, or how many whole seconds (at least 1) until this
   * link may be tried again from this address. Asking counts nothing.
   */
  check(link: string, address: string): AttemptVerdict {
    const t = this.#now();
    this.#sweep(t);
    const window = this.#windows.get(pairKey(link, address));
    if (window === undefined || !this.#open(window, t) || window.count < this.#limit) return ADMITTED;
    return { ok: false, retryAfter: Math.max(1, Math.ceil((window.opened + this.#windowMs - t) / 1000)) };
  }

  /** A wrong password was given for `link` from `address`. */
  failed(link: string, address: string): void {
    const t = this.#now();
    this.#sweep(t);
    const key = pairKey(link, address);
    const window = this.#windows.get(key);
    if (window !== undefined && this.#open(window, t)) {
      window.count++;
      return;
    }
    // A new window goes to the back, keeping the Map in the order the windows opened.
    if (window !== undefined) this.#windows.delete(key);
    else if (this.#windows.size >= this.#maxEntries) this.#windows.delete(this.#windows.keys().next().value!);
    this.#windows.set(key, { opened: t, count: 1 });
  }

  /**
   * The right password was given: the pair's wrong attempts are forgotten. Whoever gave it knows
   * the password, so counting their typos on would only lock them out; a guesser never gets here.
   */
  passed(link: string, address: string): void {
    this.#windows.delete(pairKey(link, address));
  }

  /**
   * Whether `window` still counts at `t`. One opened "in the future" (the clock was set back) has
   * ended too: otherwise it would refuse for as long as the clock was moved, not for a minute.
   */
  #open(window: Window, t: number): boolean {
    return t >= window.opened && t - window.opened < this.#windowMs;
  }

  /** Drops the ended windows at the front (the oldest opened first). */
  #sweep(t: number): void {
    for (const [key, window] of this.#windows) {
      if (this.#open(window, t)) return;
      this.#windows.delete(key);
    }
  }
}
