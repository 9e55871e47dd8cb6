/**
 * The create rate limit (`create_rate_limit`, docs/security.md): at most N creates per client
 * address in a window of a second, a minute or an hour, for instances whose create doors are open
 * to anyone. It lives below the doors: REST, MCP, YOURLS and Shlink hand the service the request,
 * and the service asks `take()` before it creates anything, so no door can count differently.
 *
 * A fixed window per client: it opens at the client's first create, admits `limit` creates, and
 * every create past them is refused until it ends; the refusal says exactly when that is, in whole
 * seconds rounded up, so a client that waits that long is admitted. One number and one time per
 * client, kept in a Map in the order the windows opened: the ended ones are at its front, and each
 * call drops those it finds there, so memory holds only the clients of the current window, and
 * never more than `maxClients` of them (past that the oldest window is forgotten: a flood from more
 * addresses than that may slip a few creates through, but it can never grow the process).
 *
 * The count is this process's own: instances sharing a database each keep their own windows
 * (docs/security.md says so).
 */
import { canonicalAddress, clientAddressEntry } from '../visits/client-address.ts';
import type { VisitRequest } from '../visits/recorder.ts';

/** `60/min`: `limit` creates per `windowMs`. */
export interface Rate {
  limit: number;
  windowMs: number;
}

/** The units `create_rate_limit` accepts, in milliseconds. */
export const RATE_UNITS: Readonly<Record<string, number>> = { s: 1000, min: 60_000, h: 3_600_000 };

/** The most creates one window may allow. */
export const MAX_RATE_LIMIT = 1_000_000;

/** How `--help` and a refused value describe the accepted values. */
export const RATE_FORMS = `N/s, N/min or N/h with N from 1 to ${MAX_RATE_LIMIT} (e.g. 60/min), or empty (off)`;

/**
 * `60/min` → its rate; empty (after trimming) → `undefined` (off). Anything else throws a
 * `RangeError` whose message says what is accepted.
 */
export function parseRate(text: string): Rate | undefined {
  const spelled = text.trim().toLowerCase();
  if (spelled === '') return undefined;
  const m = /^(\d+)\s*\/\s*(s|min|h)$/.exec(spelled);
  const limit = m ? Number(m[1]) : NaN;
  if (!m || !(limit >= 1 && limit <= MAX_RATE_LIMIT)) throw new RangeError(`must be ${RATE_FORMS}`);
  return { limit, windowMs: RATE_UNITS[m[2]!]! };
}

/** A rate as the settings keep it: `60/min`, whatever spacing or case it came in; empty when off. */
export function rateText(text: string): string {
  const rate = parseRate(text);
  if (rate === undefined) return '';
  const unit = Object.keys(RATE_UNITS).find((u) => RATE_UNITS[u] === rate.windowMs)!;
  return `${rate.limit}/${unit}`;
}

/**
 * Whom a request's creates are counted against: its client address, as `trust_proxy` finds it
 * (client-address.ts, the one the visit events use). An IPv6 client counts by its /64: one
 * subscriber is given a whole /64 and may pick any address in it, so counting single addresses
 * would let it create without end. An entry that is no address at all (a trusted proxy wrote
 * `unknown`) counts as one shared client rather than as none.
 */
export function limitKey(entry: string | null): string {
  const address = entry === null ? null : canonicalAddress(entry);
  if (address === null) return 'unknown';
  if (!address.includes(':')) return address;
  return `${prefix64(address)}::/64`;
}

/** The first four groups of a canonical IPv6 address (`2001:db8::1` → `2001:db8:0:0`). */
function prefix64(address: string): string {
  const [head = '', tail] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.slice(0, 4).join(':');
}

/** A client's window: when it opened, and the creates it admitted. */
interface ClientWindow {
  readonly opened: number;
  count: number;
}

export interface CreateLimiter {
  /** 0 when `req` may create now (and it is counted); else the whole seconds until it may. */
  take(req: VisitRequest): number;
  /** Clients with an open window (tests: memory stays bounded). */
  readonly clients: number;
}

export interface LimiterOptions {
  /** Proxies in front, as `trust_proxy`. */
  trustProxy: number;
  /** The service clock, milliseconds. */
  now: () => number;
  /** Windows kept at most (default 100,000: about 15 MB). */
  maxClients?: number;
}

export function createLimiter(rate: Rate, options: LimiterOptions): CreateLimiter {
  const { limit, windowMs } = rate;
  const { now } = options;
  const maxClients = options.maxClients ?? 100_000;
  const entryOf = clientAddressEntry(options.trustProxy);
  const windows = new Map<string, ClientWindow>();

  /** Drops the ended windows at the front (the oldest opened first). */
  function sweep(t: number): void {
    for (const [key, window] of windows) {
      if (t - window.opened < windowMs) return;
      windows.delete(key);
    }
  }

  return {
    take(req) {
      const t = now();
      sweep(t);
      const key = limitKey(entryOf(req.socket.remoteAddress, req.headers['x-forwarded-for']));
      const window = windows.get(key);
      if (window !== undefined && t - window.opened < windowMs) {
        if (window.count < limit) {
          window.count++;
          return 0;
        }
        return Math.max(1, Math.ceil((window.opened + windowMs - t) / 1000));
      }
      // A new window goes to the back, so the Map stays in the order the windows opened (a clock
      // set back breaks that order only until those windows end: the sweep just stops earlier).
      if (window !== undefined) windows.delete(key);
      else if (windows.size >= maxClients) windows.delete(windows.keys().next().value!);
      windows.set(key, { opened: t, count: 1 });
      return 0;
    },
    get clients() {
      return windows.size;
    },
  };
}
