/**
 * The shortening operations, independent of HTTP: the REST routes call them, and so will every
 * other front (MCP). One implementation of each operation; failures are `HttpError`s.
 */
import { pickCode } from './codes.ts';
import { HttpError } from '../errors.ts';
import { digestSecret, matchesSecret } from '../secrets.ts';
import type { Logger } from '../log.ts';
import { isExpired, isExpiredAt } from '../store/format.ts';
import { DataFileGoneError, type Store, type StoredRecord } from '../store/store.ts';
import { parseRetention, validateUrl, type Paging } from './validate.ts';

/** The record as the API shows it (SPEC §4). */
export interface UrlRecord {
  short_code: string;
  short_url: string;
  original_url: string;
  created_at: number;
  visit_count: number;
  retention_days: number;
}

export interface UrlList {
  count: number;
  urls: UrlRecord[];
}

/** A page of the list, read in slices; `release` it when done. */
export interface UrlListing {
  /** Every live record, this page or not (`X-Total-Count`). */
  total: number;
  /** Records on this page. */
  count: number;
  /** The page's records at positions [from, to). */
  slice(from: number, to: number): UrlRecord[];
  release(): void;
}

export interface ServiceOptions {
  store: Store;
  baseUrl: string;
  minShortLength: number;
  maxShortLength: number;
  maxUrlLength: number;
  apiKeys: readonly string[];
  /** Milliseconds since the epoch; injectable for expiry tests. */
  now: () => number;
  randomCode: (length: number) => string;
  log: Logger;
  /** Told of each link created, once it is durable (metrics). */
  created?: () => void;
}

export type Visit = { kind: 'found'; url: string } | { kind: 'expired' } | { kind: 'missing' };

const MISSING: Visit = { kind: 'missing' };
const EXPIRED: Visit = { kind: 'expired' };

export function createService(options: ServiceOptions) {
  const { store, baseUrl, now, log } = options;
  const urlRules = { maxLength: options.maxUrlLength, baseUrl };
  const keyDigests = options.apiKeys.map(digestSecret);

  const seconds = (): number => Math.floor(now() / 1000);

  const shortUrl = (code: string): string => `${baseUrl}/${code}`;

  function view(rec: StoredRecord): UrlRecord {
    return {
      short_code: rec.code,
      short_url: shortUrl(rec.code),
      original_url: rec.url,
      created_at: rec.createdAt,
      visit_count: rec.visits,
      retention_days: rec.retentionDays,
    };
  }

  /**
   * Live records newest first, paged, frozen when called: a long list can be read in slices across
   * event-loop turns (see `UrlListing`).
   */
  function listing(paging: Paging): UrlListing {
    const at = seconds();
    const snapshot = store.snapshot((createdAt, retentionDays) => !isExpiredAt(createdAt, retentionDays, at));
    const start = Math.min(paging.offset, snapshot.length);
    const count = paging.limit === undefined ? snapshot.length - start : Math.min(paging.limit, snapshot.length - start);
    return {
      total: snapshot.length,
      count,
      slice: (from, to) => snapshot.slice(start + from, start + Math.min(to, count)).map(view),
      release: snapshot.release,
    };
  }

  return {
    shortUrl,

    /** True when `key` is one of the configured admin keys; every key is compared, always. */
    isAdminKey(key: string | undefined): boolean {
      if (key === undefined || key === '' || keyDigests.length === 0) return false;
      return matchesSecret(key, keyDigests);
    },

    /** `textual`: `retentionDays` came from a query string or form, where numbers are digits. */
    async shorten(input: { url: unknown; retentionDays: unknown; textual?: boolean }): Promise<UrlRecord> {
      const url = validateUrl(input.url, urlRules);
      const retentionDays = parseRetention(input.retentionDays, input.textual);
      const code = pickCode(options.randomCode, (c) => store.taken(c), options.minShortLength, options.maxShortLength);
      if (code === undefined) {
        log.error('code space exhausted', { min: options.minShortLength, max: options.maxShortLength });
        throw new HttpError(
          503,
          `no free short code up to ${options.maxShortLength} characters; raise MAX_SHORT_LENGTH`,
        );
      }
      const createdAt = seconds();
      try {
        const record = await store.create({ code, url, createdAt, retentionDays, visits: 0 });
        options.created?.();
        return view(record);
      } catch (err) {
        throw unwritable(err);
      }
    },

    get(code: string): UrlRecord | undefined {
      const rec = store.get(code);
      return rec && !isExpired(rec, seconds()) ? view(rec) : undefined;
    },

    /** The newest live record whose original URL equals `input` once normalized. */
    lookup(input: unknown): UrlRecord | undefined {
      if (input === undefined || input === null || input === '') throw new HttpError(400, 'url is required');
      let href: string;
      try {
        href = new URL(String(input)).href;
      } catch {
        throw new HttpError(400, 'url must be an absolute URL such as https://example.com/page');
      }
      const at = seconds();
      for (const rec of store.withUrl(href)) if (!isExpired(rec, at)) return view(rec);
      return undefined;
    },

    listing,

    /** Live records newest first, paged; `total` counts every live record. */
    list(paging: Paging): { total: number; urls: UrlRecord[] } {
      const page = listing(paging);
      try {
        return { total: page.total, urls: page.slice(0, page.count) };
      } finally {
        page.release();
      }
    },

    /** False when there is no such live code: an expired link is gone for every API, delete included. */
    async remove(code: string): Promise<boolean> {
      const rec = store.get(code);
      if (!rec || isExpired(rec, seconds())) return false;
      try {
        return await store.delete(code);
      } catch (err) {
        throw unwritable(err);
      }
    },

    /** Resolves a short code for a redirect; `count` is false for HEAD. */
    visit(code: string, count: boolean): Visit {
      const url = store.resolve(code, seconds(), count);
      if (url === undefined) return MISSING;
      if (url === null) return EXPIRED;
      return { kind: 'found', url };
    },
  };
}

export type Service = ReturnType<typeof createService>;

/**
 * A failed log write (an errno from the file system: ENOSPC, EROFS, EIO…, or the data file removed
 * under the process) becomes a 503: the change was not made, and the client may retry. Anything
 * else is a bug and goes on to the generic 500. The store logs the failure (once, then in
 * summaries: a full disk fails every request).
 */
function unwritable(err: unknown): unknown {
  if (err instanceof DataFileGoneError) return new HttpError(503, err.message);
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string' || !/^E[A-Z0-9]+$/.test(code)) return err;
  return new HttpError(503, `storage is not writable right now (${code}); nothing was changed, try again later`);
}
