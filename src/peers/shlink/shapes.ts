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
  meta: { validSince: null; validUntil: string | null; maxVisits: number | null };
  domain: string | null;
  title: string | null;
  crawlable: boolean;
  forwardQuery: boolean;
  hasRedirectRules: boolean;
}

/**
 * A record as a Shlink `ShortUrl`. What this service does not do is said as it is: no link is
 * crawlable (robots.txt disallows all), no query is forwarded, and there are no redirect rules. A
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
    meta: { validSince: null, validUntil: record.expires_at === null ? null : isoDate(record.expires_at), maxVisits: record.max_visits },
    domain: record.domain,
    title: record.title,
    crawlable: false,
    forwardQuery: false,
    hasRedirectRules: false,
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
