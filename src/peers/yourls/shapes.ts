/**
 * The results of YOURLS' API actions (docs/compat.md#yourls-api), built from our records: the
 * field names, their order, their messages and their status codes are YOURLS 1.10's, with its
 * default of one short URL per long URL. What YOURLS keeps and we do not is given as YOURLS would
 * show it empty: `ip` is `""` (the creator's address is never stored). Pure functions.
 */
import type { UrlRecord } from '../../links/record.ts';
import { retryAfter } from '../../http/headers.ts';
import type { YourlsFields, YourlsResult } from './output.ts';

/** The YOURLS version whose API this surface answers as (`action=version`), and its schema's. */
export const YOURLS_VERSION = '1.10.4';
export const YOURLS_DB_VERSION = '507';

/** What the stats actions show with `format=simple`. */
const NEED_FORMAT = 'Need either XML or JSON format for stats';

export const PLEASE_LOG_IN = 'Please log in';
export const INVALID_LOGIN = 'Invalid username or password';

/** Database time as YOURLS shows it, `YYYY-MM-DD HH:MM:SS`, here in UTC. */
export function yourlsDate(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

/**
 * A link's title as YOURLS shows it: when none was given YOURLS fetches the page's, and keeps
 * the URL itself when it finds none. Nothing is fetched here, so a link without a title shows its URL.
 */
export function yourlsTitle(record: UrlRecord): string {
  return record.title ?? record.original_url;
}

/** YOURLS' trimming of a URL in its messages: past 60 characters, the first 55 and `[...]`. */
export function trimLong(text: string): string {
  const chars = [...text];
  return chars.length > 60 ? `${chars.slice(0, 55).join('')}[...]` : text;
}

/** The keyword of `shorturl`, which may be a keyword or a whole short URL of this service. */
export function keywordOf(shorturl: string, baseUrl: string): string {
  return shorturl.split(`${baseUrl}/`).join('').trim();
}

/** A link as the stats actions list it. */
function linkStats(record: UrlRecord): YourlsFields {
  return {
    shorturl: record.short_url,
    url: record.original_url,
    title: yourlsTitle(record),
    timestamp: yourlsDate(record.created_at),
    ip: '',
    clicks: record.visit_count,
  };
}

/** `shorturl` created a link. */
export function added(record: UrlRecord): YourlsResult {
  const title = yourlsTitle(record);
  return {
    fields: {
      status: 'success',
      code: '',
      message: `${trimLong(record.original_url)} added to database`,
      errorCode: '',
      statusCode: '200',
      url: { keyword: record.short_code, url: record.original_url, title, date: yourlsDate(record.created_at), ip: '' },
      title,
      shorturl: record.short_url,
    },
    simple: record.short_url,
  };
}

/** `shorturl` of a URL already shortened: YOURLS refuses it and names the link that has it. */
export function alreadyStored(record: UrlRecord, baseUrl: string): YourlsResult {
  const title = yourlsTitle(record);
  const site = baseUrl.replace(/https?:\/\//g, '');
  return {
    fields: {
      status: 'fail',
      code: 'error:url',
      message: `${trimLong(record.original_url)} already exists in database (short URL: ${site}/${record.short_code})`,
      errorCode: '400',
      statusCode: '400',
      url: { keyword: record.short_code, url: record.original_url, title, date: yourlsDate(record.created_at), ip: '', clicks: record.visit_count },
      title,
      shorturl: record.short_url,
    },
    simple: record.short_url,
  };
}

/** `shorturl` refused before anything was stored; `status` as YOURLS' codes go (400, 503). */
export function shortenFailed(code: string, message: string, status = '400'): YourlsResult {
  return { fields: { status: 'fail', code, message, errorCode: status, statusCode: status }, simple: '' };
}

/**
 * `shorturl` past `create_rate_limit`: YOURLS' own words for its flood check, with the status it
 * gives them (429), in the shape of its other refusals, and the seconds to wait in `Retry-After`.
 */
export function flooded(seconds: number): YourlsResult {
  return { ...shortenFailed('error:flood', 'Too many URLs added too fast. Slow down please.', '429'), headers: [retryAfter(seconds)] };
}

export const NO_URL = (): YourlsResult => shortenFailed('error:nourl', 'Missing or malformed URL');
export const NO_LOOP = (): YourlsResult => shortenFailed('error:noloop', 'URL is a short URL');
export const KEYWORD_TAKEN = (keyword: string): YourlsResult =>
  shortenFailed('error:keyword', `Short URL ${keyword} already exists in database or is reserved`);

/**
 * A refusal of the service (its `detail`, which names the field first) in YOURLS' words. A reserved
 * keyword is YOURLS' own refusal; YOURLS tidies any other bad keyword, or a title, instead of
 * refusing it: refused here, they keep YOURLS' keyword code, or a title code of the same kind.
 */
export function refusal(detail: string, keyword: string): YourlsResult {
  if (detail.startsWith('url points at this shortener')) return NO_LOOP();
  if (detail.startsWith('code') && detail.endsWith("is reserved for the service's own paths")) return KEYWORD_TAKEN(keyword);
  if (detail.startsWith('code')) return shortenFailed('error:keyword', detail);
  if (detail.startsWith('title')) return shortenFailed('error:title', detail);
  return NO_URL();
}

export function expanded(record: UrlRecord): YourlsResult {
  return {
    fields: {
      keyword: record.short_code,
      shorturl: record.short_url,
      longurl: record.original_url,
      title: yourlsTitle(record),
      message: 'success',
      statusCode: '200',
    },
    simple: record.original_url,
  };
}

export function notExpanded(keyword: string): YourlsResult {
  return { fields: { keyword, message: 'Error: short URL not found', errorCode: '404' }, simple: 'not found' };
}

export function urlStats(record: UrlRecord | undefined): YourlsResult {
  if (record === undefined) return { fields: { statusCode: '404', message: 'Error: short URL not found' }, simple: NEED_FORMAT };
  return { fields: { statusCode: '200', message: 'success', link: linkStats(record) }, simple: NEED_FORMAT };
}

export interface Totals {
  links: number;
  clicks: number;
}

const totalsOf = (totals: Totals): YourlsFields => ({ total_links: totals.links, total_clicks: totals.clicks });

/** `stats`: the links picked (`links` only when there are some), then the totals. */
export function stats(links: readonly UrlRecord[], totals: Totals): YourlsResult {
  const fields: Record<string, YourlsFields | string> = {};
  if (links.length > 0) fields['links'] = Object.fromEntries(links.map((record, i) => [`link_${i + 1}`, linkStats(record)]));
  fields['stats'] = totalsOf(totals);
  fields['statusCode'] = '200';
  fields['message'] = 'success';
  return { fields, simple: NEED_FORMAT };
}

export function dbStats(totals: Totals): YourlsResult {
  return { fields: { 'db-stats': totalsOf(totals), statusCode: '200', message: 'success' }, simple: NEED_FORMAT };
}

export function version(withDb: boolean): YourlsResult {
  return { fields: withDb ? { version: YOURLS_VERSION, db_version: YOURLS_DB_VERSION } : { version: YOURLS_VERSION }, simple: YOURLS_VERSION };
}

/**
 * `action` could not reach the links (a database down): a create is the `error:db` refusal of a
 * link that could not be stored, any other action YOURLS' error shape; 503 either way.
 */
export function unavailable(action: string, detail: string): YourlsResult {
  if (action === 'shorturl') return shortenFailed('error:db', detail, '503');
  return { fields: { errorCode: '503', message: detail }, simple: detail };
}

export function unknownAction(): YourlsResult {
  const message = 'Unknown or missing "action" parameter';
  return { fields: { errorCode: '400', message }, simple: message };
}

/** The refusal of a request without a valid credential: YOURLS always adds the callback, even empty. */
export function authError(message: string, callback: string): YourlsResult {
  return { fields: { message, errorCode: '403', callback }, simple: message };
}

/** A result with the request's JSONP callback added, as YOURLS adds it to every answer. */
export function withCallback(result: YourlsResult, callback: string): YourlsResult {
  return { ...result, fields: { ...result.fields, callback } };
}
