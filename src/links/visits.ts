/**
 * The visit operations (docs/analytics.md): the stats of one link or of every link, a link's
 * events page by page, and their removal, independent of HTTP: the REST routes
 * (`api/visit-routes.ts`) and the MCP tool `get_stats` call these. Parameters are checked before
 * the code is looked up, so a bad range is a 400 whether or not the link exists; what a range may
 * be is decided once, in `visits/range.ts`, and a page as the list's is (`list-query.ts`). A store
 * that cannot be read or written answers `unavailable`.
 */
import { createDomains, type Domains } from './domains.ts';
import type { LinkStore } from '../store/link-store.ts';
import type { TopList, VisitEvent, VisitStats } from '../visits/event.ts';
import { parseEventFilter, parseStatsRange, RangeRefusal, type RangeParams, type StatsRange } from '../visits/range.ts';
import { checkPaging } from './list-query.ts';
import { guarded, NOT_FOUND, outage, refused, type Invalid, type NotFound, type Unavailable } from './outcomes.ts';
import { Refusal } from './refusal.ts';
import { MAX_LIMIT } from './validate.ts';

/** `visit_tracking`: one event per counted visit, or only the count (the setting is `config/settings.ts`'s). */
export type VisitTracking = 'events' | 'counts';

export const DEFAULT_VISIT_PAGE = 100;
/** A page of events is at most as long as a page of the list. */
export const MAX_VISIT_PAGE = MAX_LIMIT;

interface TopListJson {
  top: { value: string | null; visits: number }[];
  others: number;
}

/** The answer of `GET /api/urls/<code>/stats`; over every link, no `short_code` and `links` added. */
export interface StatsJson {
  short_code?: string;
  tracking: VisitTracking;
  visit_count: number;
  untracked_visits: number;
  from: number;
  to: number;
  interval: StatsRange['interval'];
  tz: string;
  visits: number;
  unique_visitors: number;
  bots: number;
  series: { start: number; visits: number; unique_visitors: number }[];
  referrers: TopListJson;
  countries: TopListJson;
  browsers: TopListJson;
  os: TopListJson;
  devices: TopListJson;
  links?: { short_code: string; domain: string | null; visits: number }[];
}

/** An event as every door shows it: never the visitor id. */
export interface EventJson {
  time: number;
  referrer: string | null;
  country: string | null;
  browser: string | null;
  os: string | null;
  device: string | null;
  bot: boolean;
}

/** A link's event: which of its redirect rules sent the visitor (its index), or null. */
export interface LinkEventJson extends EventJson {
  rule: number | null;
}

export type StatsOutcome = { ok: true; stats: StatsJson } | Invalid | NotFound | Unavailable;
export type VisitsOutcome = { ok: true; total: number; visits: LinkEventJson[] } | Invalid | NotFound | Unavailable;
export type DeleteVisitsOutcome = { ok: true; deleted: number } | Invalid | NotFound | Unavailable;

/** A page of events as the door received it: numbers, or decimal digits from a query string. */
export interface VisitPaging {
  /** 1–1,000; absent = 100. */
  limit?: number | string | undefined;
  offset?: number | string | undefined;
}

export interface VisitOptions {
  store: LinkStore;
  /** Milliseconds since the epoch. */
  now: () => number;
  tracking: VisitTracking;
  /** The service's domains; absent: only a default one (`http://localhost`). */
  domains?: Domains | undefined;
}

const list = (l: TopList): TopListJson => ({ top: l.top.map(({ value, visits }) => ({ value, visits })), others: l.others });

export const eventJson = (e: VisitEvent): EventJson => ({
  time: e.time,
  referrer: e.referrer,
  country: e.country,
  browser: e.browser,
  os: e.os,
  device: e.device,
  bot: e.bot,
});

const linkEventJson = (e: VisitEvent): LinkEventJson => ({ ...eventJson(e), rule: e.rule ?? null });

const ONE_DOMAIN = createDomains('http://localhost');

/** The stats of a store in the shape of the routes; `code` null = every link, each named by its code and domain (`domains`). */
export function statsJson(code: string | null, range: StatsRange, stats: VisitStats, tracking: VisitTracking, domains: Domains = ONE_DOMAIN): StatsJson {
  const json: StatsJson = {
    ...(code === null ? {} : { short_code: code }),
    tracking,
    visit_count: stats.visitCount,
    untracked_visits: stats.untracked,
    from: range.from,
    to: range.to,
    interval: range.interval,
    tz: range.tz,
    visits: stats.visits,
    unique_visitors: stats.uniqueVisitors,
    bots: stats.bots,
    series: stats.series.map((s, i) => ({ start: range.edges[i]!, visits: s.visits, unique_visitors: s.uniqueVisitors })),
    referrers: list(stats.referrers),
    countries: list(stats.countries),
    browsers: list(stats.browsers),
    os: list(stats.os),
    devices: list(stats.devices),
  };
  if (code === null) json.links = (stats.links ?? []).map((l) => ({ short_code: domains.codeOf(l.code), domain: domains.domainOf(l.code), visits: l.visits }));
  return json;
}

const rangeRefused = (r: RangeRefusal): Invalid => ({ ok: false, error: 'invalid', detail: r.detail });

export function createVisitOperations({ store, now, tracking, domains = ONE_DOMAIN }: VisitOptions) {
  const seconds = (): number => Math.floor(now() / 1000);

  return {
    /** `code` null: every live link; else the link of `code` on the domain `domain` names. */
    async stats(code: string | null, params: RangeParams, domain?: unknown): Promise<StatsOutcome> {
      const at = seconds();
      const range = parseStatsRange(params, at);
      if (range instanceof RangeRefusal) return rangeRefused(range);
      const key = code === null ? null : domains.keyOf(code, domain);
      if (key !== null && typeof key !== 'string') return key;
      const stats = await guarded(() => store.visitStats(key, range, at));
      if (stats === undefined) return NOT_FOUND;
      if ('error' in stats) return stats;
      return { ok: true, stats: statsJson(code, range, stats, tracking, domains) };
    },

    /** A live link's events, newest first, `from`/`to`/`bots` filtered, paged (the page checked first). */
    async visits(code: string, params: Omit<RangeParams, 'interval'>, paging: VisitPaging = {}, domain?: unknown): Promise<VisitsOutcome> {
      const page = checkPaging(paging.limit, paging.offset);
      if (page instanceof Refusal) return refused(page);
      const filter = parseEventFilter(params);
      if (filter instanceof RangeRefusal) return rangeRefused(filter);
      const key = domains.keyOf(code, domain);
      if (typeof key !== 'string') return key;
      const events = await guarded(() => store.listVisits(key, filter, page.limit ?? DEFAULT_VISIT_PAGE, page.offset, seconds()));
      if (events === undefined) return NOT_FOUND;
      if ('error' in events) return events;
      return { ok: true, total: events.total, visits: events.events.map(linkEventJson) };
    },

    /** Removes a live link's events and sets its counts to 0; durable before it resolves. */
    async deleteVisits(code: string, domain?: unknown): Promise<DeleteVisitsOutcome> {
      const key = domains.keyOf(code, domain);
      if (typeof key !== 'string') return key;
      try {
        const deleted = await store.deleteVisits(key, seconds());
        return deleted === undefined ? NOT_FOUND : { ok: true, deleted };
      } catch (err) {
        return outage(err);
      }
    },
  };
}
