/**
 * Input rules of the shortening API (SPEC §4) as pure functions. Each returns the clean value or
 * throws `HttpError(400, reason)`; the reason is written for the person who sent the request.
 */
import { HttpError } from './errors.ts';
import { normalizeTarget, stripBase } from './router.ts';

export const MAX_RETENTION_DAYS = 36500;

export interface UrlRules {
  maxLength: number;
  /** `https://s.example/x`: links into this space would redirect to themselves. */
  baseUrl: string;
}

/** Returns the WHATWG serialization (`new URL(input).href`) of an acceptable original URL. */
export function validateUrl(input: unknown, rules: UrlRules): string {
  if (input === undefined || input === null || input === '') throw new HttpError(400, 'url is required');
  if (typeof input !== 'string') throw new HttpError(400, 'url must be a string');
  if (input.length > rules.maxLength) {
    throw new HttpError(400, `url is too long: ${input.length} characters, the limit is ${rules.maxLength}`);
  }
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new HttpError(400, 'url must be an absolute URL such as https://example.com/page');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new HttpError(400, `url must use http or https, not ${url.protocol.slice(0, -1)}`);
  }
  if (!url.hostname) throw new HttpError(400, 'url must have a host');
  if (url.username || url.password) {
    throw new HttpError(400, 'url must not contain a user name or password (user@host URLs are a phishing pattern)');
  }
  if (url.href.length > rules.maxLength) {
    throw new HttpError(400, `url is too long once normalized: ${url.href.length} characters, the limit is ${rules.maxLength}`);
  }
  if (isOwnShortLink(url, rules.baseUrl)) {
    throw new HttpError(400, 'url points at this shortener itself; a short link to a short link would loop');
  }
  return url.href;
}

/**
 * Same origin as the base URL and a path the router would place inside the base path: a link into
 * our own short-link space. The path is split and decoded exactly as the router does, so `/%73/x`
 * under base `/s` counts too; a path the router refuses (400) cannot loop.
 */
function isOwnShortLink(url: URL, baseUrl: string): boolean {
  const base = new URL(baseUrl);
  // `host.` is the fully-qualified spelling of `host`: the same server.
  const host = (u: URL): string => `${u.protocol}//${u.hostname.replace(/\.$/, '')}:${u.port}`;
  if (host(url) !== host(base)) return false;
  const path = normalizeTarget(url.pathname);
  const basePath = normalizeTarget(base.pathname);
  if (!path.ok || !basePath.ok) return false;
  return stripBase(path.target.segments, basePath.target.segments) !== undefined;
}

/**
 * `retention_days`: absent (undefined/null) = 0 = forever; otherwise an integer 0–36500. From a
 * query string or a form (`textual`) it arrives as decimal digits; in JSON it must be a number.
 */
export function parseRetention(raw: unknown, textual = false): number {
  if (raw === undefined || raw === null) return 0;
  const value = textual && typeof raw === 'string' && /^\d{1,6}$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_RETENTION_DAYS) {
    throw new HttpError(400, `retention_days must be an integer from 0 to ${MAX_RETENTION_DAYS} (0 keeps the link forever)`);
  }
  return value;
}

export interface Paging {
  limit: number | undefined;
  offset: number;
}

export const MAX_LIMIT = 1000;

/** `limit` 1–1000 and `offset` ≥ 0, both optional; without `limit` the whole list is returned. */
export function parsePaging(query: URLSearchParams): Paging {
  const limit = query.get('limit');
  const offset = query.get('offset');
  const paging: Paging = { limit: undefined, offset: 0 };
  if (limit !== null) {
    if (!/^\d{1,4}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_LIMIT) {
      throw new HttpError(400, `limit must be an integer from 1 to ${MAX_LIMIT}`);
    }
    paging.limit = Number(limit);
  }
  if (offset !== null) {
    if (!/^\d{1,15}$/.test(offset)) throw new HttpError(400, 'offset must be an integer of 0 or more');
    paging.offset = Number(offset);
  }
  return paging;
}
