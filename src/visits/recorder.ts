/**
 * The recorder: a request → the event of its visit (docs/analytics.md). `source(req)` is what the
 * redirect hands the store, a closure the store calls only for a visit it counts, so a miss, an
 * expired link, a used-up one or a `HEAD` pays nothing but the closure; a counted visit pays for
 * what is asked here: what is known of a returning client (its `User-Agent`'s families, its
 * address's country, both values' keyed hashes) is one lookup per value (client-facts.ts).
 *
 * What an event keeps, and what it never does, is decided in the files this one calls: the host of
 * `Referer` (referrer.ts), the client address behind `trust_proxy` proxies (client-address.ts,
 * used for the country and the id, never kept), the daily id (visitor-id.ts). A request with
 * `Sec-GPC: 1` or `DNT: 1` keeps the time and the bot flag only.
 *
 * The country comes from a trusted proxy's header (`geoip_header`, read only when
 * `trust_proxy` > 0: without a proxy in front, anyone could send it), else from the `.mmdb` file by
 * the client address, else it is `null`. A header value is a country only as two letters A–Z, and
 * not `XX`, which Cloudflare sends for an unknown country (`T1`, for Tor, is no two letters).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { clientAddressEntry, type EntryRange, forwardedList, forwardedRange } from './client-address.ts';
import { ClientFacts, type Located } from './client-facts.ts';
import type { VisitEvent, VisitEventSource } from './event.ts';
import { createReferrerReader } from './referrer.ts';
import { createUserAgentClassifier, type UserAgentClass } from './user-agent.ts';
import { mixIds, tracksVisitor, utcDay, type VisitorIds } from './visitor-id.ts';

/** What the recorder reads of a request: node:http's `IncomingMessage` is one. */
export interface VisitRequest {
  readonly headers: IncomingHttpHeaders;
  readonly socket: { readonly remoteAddress?: string | undefined };
}

/** Where countries come from: the `.mmdb` file (geoip.ts), or nothing. */
export interface CountrySource {
  countryOf(address: string): string | null;
  /** The database in use, when it can change (geoip.ts reloads it): a new one is asked again. */
  readonly reader?: unknown;
}

export interface RecorderOptions {
  /** Proxies in front (0–10), as `trust_proxy`. */
  trustProxy: number;
  /** The country header, lower case; empty for none. Read only when `trustProxy` > 0. */
  geoipHeader: string;
  /** The country database, if any. */
  countries?: CountrySource | undefined;
  /** The service clock, milliseconds. */
  now: () => number;
  visitorIds: VisitorIds;
  /** The families of a `User-Agent` (default: a cached classifier of its own). */
  userAgents?: (ua: string | undefined) => UserAgentClass;
  /** Told of each event made, with its bot flag (the metrics' `shortener_visit_events_total`). */
  recorded?: (bot: boolean) => void;
}

export interface Recorder {
  /** The event of `req`'s visit, made when the store calls it (a counted visit only). */
  source(req: VisitRequest): VisitEventSource;
  /** The event of `req`'s visit, now; `counted` false for an orphan visit, which the events metric leaves out. */
  event(req: VisitRequest, counted?: boolean): VisitEvent;
  /** Undefined when an event can be made at once; else a promise to wait for first (visitor-id.ts `ready`). */
  ready(): Promise<void> | undefined;
}

/** Cloudflare's "country unknown" (its `T1`, Tor, fails the two-letter test anyway). */
const UNKNOWN_COUNTRIES: ReadonlySet<string> = new Set(['XX']);

/** A country header's value as a country, or `null` (rules above). */
export function headerCountry(value: string | string[] | undefined): string | null {
  if (typeof value !== 'string' || value.length !== 2) return null;
  const country = value.toUpperCase();
  const a = country.charCodeAt(0);
  const b = country.charCodeAt(1);
  if (a < 65 || a > 90 || b < 65 || b > 90) return null;
  return UNKNOWN_COUNTRIES.has(country) ? null : country;
}

export function createRecorder(options: RecorderOptions): Recorder {
  const { now, visitorIds, countries } = options;
  const entryOf = clientAddressEntry(options.trustProxy);
  const range: EntryRange = { from: 0, to: 0 };
  const behindProxy = options.trustProxy > 0;
  const userAgents = options.userAgents ?? createUserAgentClassifier();
  const recorded = options.recorded;
  const referrerOf = createReferrerReader();
  // The header is honoured only behind a proxy that sets it: a client could send any country.
  const header = options.trustProxy > 0 && options.geoipHeader !== '' ? options.geoipHeader : undefined;
  // With the header the database is never asked.
  const located = header === undefined ? countries : undefined;
  const clients = new ClientFacts({
    classify: userAgents,
    countryOf: (address) => (located === undefined ? null : located.countryOf(address)),
    countries: () => (located === undefined ? undefined : (located.reader ?? located)),
  });

  function event(req: VisitRequest, counted = true): VisitEvent {
    const headers = req.headers;
    const ms = now();
    const time = Math.floor(ms / 1000);
    const ua = headers['user-agent'];
    const today = visitorIds.key(ms);
    clients.startDay(today?.day ?? utcDay(ms));
    const key = today?.key;
    const agent = clients.agent(ua, key);
    const families = agent.families;
    if (counted) recorded?.(families.bot);
    if (!tracksVisitor(headers)) {
      return { time, referrer: null, country: null, browser: null, os: null, device: null, bot: families.bot, visitor: null };
    }
    const forwarded = headers['x-forwarded-for'];
    let client: Located | undefined;
    if (behindProxy && forwarded !== undefined) {
      // The client's entry read where it stands; the socket's address is not read (a system call).
      const list = forwardedList(forwarded);
      forwardedRange(list, options.trustProxy, range);
      client = clients.addressIn(list, range.from, range.to, key);
    } else {
      const entry = entryOf(req.socket.remoteAddress, forwarded);
      client = entry === null ? undefined : clients.address(entry, key);
    }
    const hash = client?.hash;
    return {
      time,
      referrer: referrerOf(headers.referer),
      country: header !== undefined ? headerCountry(headers[header]) : (client?.country ?? null),
      browser: families.browser,
      os: families.os,
      device: families.device,
      bot: families.bot,
      visitor: hash === undefined || agent.hash === undefined ? null : mixIds(hash, agent.hash),
    };
  }

  return {
    source(req) {
      return function visitEvent(mode, made) {
        if (mode !== 'counted' || made === undefined) return event(req, mode !== 'quiet');
        recorded?.(made.bot);
        return made;
      };
    },
    event,
    ready: visitorIds.ready,
  };
}
