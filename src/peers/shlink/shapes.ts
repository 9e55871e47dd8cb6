/**
 * Our records and events in Shlink's shapes (docs/compat.md): `ShortUrl`, `Visit`, the visits
 * summary and the pagination object, as Shlink's OpenAPI describes them and its SDK reads them.
 * Pure functions: the routes (`routes.ts`) feed them what the service answered.
 */
import type { UrlRecord } from '../../links/record.ts';
import type { EventJson } from '../../links/visits.ts';
import { typicalUserAgent } from './user-agents.ts';

/** `{total, nonBots, bots}`: bots are the link's bot events; every other visit counts as not a bot. */
export interface VisitsSummary {
  total: number;
  nonBots: number;
  bots: number;
}

export const summary = (total: number, bots: number): VisitsSummary => ({ total, nonBots: total - bots, bots });

/** Unix seconds as ISO 8601 with an offset, as Shlink writes dates (`2026-05-01T10:00:00+00:00`). */
export function isoDate(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

export interface ShortUrlJson {
  shortCode: string;
  shortUrl: string;
  longUrl: string;
  dateCreated: string;
  visitsSummary: VisitsSummary;
  tags: string[];
  meta: { validSince: string | null; validUntil: string | null; maxVisits: number | null };
  domain: string | null;
  title: string | null;
  crawlable: boolean;
  forwardQuery: boolean;
  hasRedirectRules: boolean;
}

/**
 * Until when a link answers (Unix seconds; null: without end), as Shlink's `validUntil` says it.
 * Two things end a link here: its `valid_until`, and its retention (`expires_at`, from
 * `retention_days`, which links made through this surface before it served `validUntil` have).
 * Shlink has one field for both, so it shows the one that comes first: `valid_until` when set and
 * no later than the retention's end, else that end, which is what it always showed.
 */
export function validUntilOf(record: Pick<UrlRecord, 'valid_until' | 'expires_at'>): number | null {
  const { valid_until: until, expires_at: expires } = record;
  if (until === null) return expires;
  return expires === null ? until : Math.min(until, expires);
}

const isoOrNull = (seconds: number | null): string | null => (seconds === null ? null : isoDate(seconds));

/**
 * A record as a Shlink `ShortUrl`. No link is crawlable (robots.txt disallows all); the rest is the
 * record's own: its validity, whether it forwards the query, whether it has redirect rules. A
 * link's `domain` is null on the default domain, as Shlink's.
 */
export function shortUrlJson(record: UrlRecord, visits: VisitsSummary): ShortUrlJson {
  return {
    shortCode: record.short_code,
    shortUrl: record.short_url,
    longUrl: record.original_url,
    dateCreated: isoDate(record.created_at),
    visitsSummary: visits,
    tags: record.tags,
    meta: { validSince: isoOrNull(record.valid_since), validUntil: isoOrNull(validUntilOf(record)), maxVisits: record.max_visits },
    domain: record.domain,
    title: record.title,
    crawlable: false,
    forwardQuery: record.forward_query,
    hasRedirectRules: record.rules.length > 0,
  };
}

export interface VisitLocationJson {
  countryCode: string;
  countryName: string;
  regionName: null;
  cityName: null;
  latitude: null;
  longitude: null;
  timezone: null;
  isEmpty: false;
}

export interface VisitJson {
  referer: string;
  date: string;
  userAgent: string;
  visitLocation: VisitLocationJson | null;
  potentialBot: boolean;
  visitedUrl: string;
}

/** Made on first use: building it costs tens of milliseconds, at the start of every process that never shows a Shlink visit. */
let countryNames: Intl.DisplayNames | undefined;

/** A country's English name (`DE` → `Germany`); the code itself when the runtime knows no name. */
export function countryName(code: string): string {
  try {
    countryNames ??= new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });
    return countryNames.of(code) ?? code;
  } catch {
    return code;
  }
}

/**
 * An event as a Shlink `Visit` of the link whose short URL is `shortUrl`. The event keeps the
 * referrer's host only (so `https://<host>/`), the country only (no region, city or position),
 * and the client's families only (so a typical `User-Agent` of them).
 */
export function visitJson(event: EventJson, shortUrl: string): VisitJson {
  return {
    referer: event.referrer === null ? '' : `https://${event.referrer}/`,
    date: isoDate(event.time),
    userAgent: typicalUserAgent(event.browser as Parameters<typeof typicalUserAgent>[0], event.os as Parameters<typeof typicalUserAgent>[1]),
    visitLocation:
      event.country === null
        ? null
        : {
            countryCode: event.country,
            countryName: countryName(event.country),
            regionName: null,
            cityName: null,
            latitude: null,
            longitude: null,
            timezone: null,
            isEmpty: false,
          },
    potentialBot: event.bot,
    visitedUrl: shortUrl,
  };
}

export interface Pagination {
  currentPage: number;
  pagesCount: number;
  itemsPerPage: number;
  itemsInCurrentPage: number;
  totalItems: number;
}

/**
 * Shlink's pagination of `total` items, `perPage` to a page (-1: all on one page, whose size is
 * then the total, at least 1), `inPage` of them on page `page`. There is always a first page.
 */
export function pagination(page: number, perPage: number, total: number, inPage: number): Pagination {
  const size = perPage < 1 ? Math.max(total, 1) : perPage;
  return { currentPage: page, pagesCount: Math.max(1, Math.ceil(total / size)), itemsPerPage: size, itemsInCurrentPage: inPage, totalItems: total };
}

/** The positions [from, to) of page `page` (from 1) of `perPage` items (-1: all). */
export function pageBounds(page: number, perPage: number, total: number): [number, number] {
  if (perPage < 1) return page === 1 ? [0, total] : [total, total];
  const from = Math.min((page - 1) * perPage, total);
  return [from, Math.min(from + perPage, total)];
}
