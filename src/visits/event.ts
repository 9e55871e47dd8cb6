/**
 * A visit as recorded (docs/analytics.md): what every store keeps of one counted redirect, and the
 * shapes of the questions the stats routes ask the stores. Nothing here names a person: no address,
 * no `User-Agent` text, and a visitor id that means something only within its UTC day.
 */
import type { Browser, Device, Os } from './user-agent.ts';

export type { Browser, Device, Os } from './user-agent.ts';

export interface VisitEvent {
  /** Unix seconds. */
  readonly time: number;
  /** The host of `Referer`, lower-case; null for none. */
  readonly referrer: string | null;
  /** ISO 3166-1 alpha-2, upper-case; null when unknown. */
  readonly country: string | null;
  /** From `User-Agent`; null without one (and in an event of a visitor who asked not to be tracked). */
  readonly browser: Browser | null;
  readonly os: Os | null;
  readonly device: Device | null;
  readonly bot: boolean;
  /**
   * The daily visitor id (visitor-id.ts), a signed 32-bit integer; null when the request asked not
   * to be tracked, had no address, or was imported. Never shown by any route.
   */
  readonly visitor: number | null;
  /**
   * The redirect rule that sent the visitor (docs/api.md, redirect rules): its index in the link's
   * rules. Absent when none did (no rule held, or the link has none), as in every event before rules.
   */
  readonly rule?: number;
}

/**
 * Made only when a visit is counted: the redirect of a link that is not found pays nothing. A
 * store that must make the event before it knows whether the visit counts (a database's one
 * statement decides both) makes it `'quiet'`, which the events metric is not told of, and once the
 * visit counted calls the source again with `'counted'` and that event: nothing is made then, the
 * metric is told. A store that knows first calls it bare, once.
 */
export type VisitEventSource = (mode?: 'quiet' | 'counted', made?: VisitEvent) => VisitEvent;

/** `bots`: leave bot events out (the default), count them too, or count only them. */
export type BotFilter = 'exclude' | 'include' | 'only';
export const BOT_FILTERS: readonly BotFilter[] = ['exclude', 'include', 'only'];

/** Events with `from <= time < to` (Unix seconds) that pass `bots`. */
export interface EventFilter {
  readonly from: number;
  readonly to: number;
  readonly bots: BotFilter;
}

/**
 * The events a visits export holds: a range and a bot filter, of one link's alone when `code` is
 * given, and of the links the key `author` made when that is given (an editor's own).
 */
export type VisitExportFilter = EventFilter & { readonly code?: string | undefined; readonly author?: string | undefined };

/**
 * A stats question: the range cut into buckets. `edges` are the bucket starts followed by the end
 * of the last one, in Unix seconds: `edges[0] = from`, `edges[edges.length - 1] = to`, increasing
 * (a Berlin day is 23, 24 or 25 hours long, so the stores never compute edges themselves).
 */
export interface StatsQuery extends EventFilter {
  readonly edges: readonly number[];
}

/** The 10 largest values (ties by value, `null` first) and the sum of the rest. */
export interface TopList {
  readonly top: { readonly value: string | null; readonly visits: number }[];
  readonly others: number;
}

export const TOP_SIZE = 10;

/** What a store answers to a `StatsQuery` (the routes add the echoed parameters). */
export interface VisitStats {
  /** `visit_count` of the link, or summed over every live link. */
  readonly visitCount: number;
  /** `untracked_visits`, likewise. */
  readonly untracked: number;
  /** The range's events that pass `bots`. */
  readonly visits: number;
  /** Distinct (UTC day, visitor id) pairs among them; an event without an id counts one. */
  readonly uniqueVisitors: number;
  /** The range's bot events, whatever `bots` says. */
  readonly bots: number;
  /** One per bucket, in order, zeros included. */
  readonly series: { readonly visits: number; readonly uniqueVisitors: number }[];
  readonly referrers: TopList;
  readonly countries: TopList;
  readonly browsers: TopList;
  readonly os: TopList;
  readonly devices: TopList;
  /** Over every link only: the 10 links with the most visits in the range (ties by code). */
  readonly links?: { readonly code: string; readonly visits: number }[];
}

/** A page of one link's events, newest first (by time, then arrival). */
export interface VisitPage {
  /** Events that pass the filter, on this page or not (`X-Total-Count`). */
  readonly total: number;
  readonly events: VisitEvent[];
}

/** One event of an export, or a row of an import: the event and its link's code. */
export interface CodedEvent {
  readonly code: string;
  readonly event: VisitEvent;
}

/** What an imported event did (docs/analytics.md, moving history). */
export type ImportedVisit = 'imported' | 'unknown_code';
