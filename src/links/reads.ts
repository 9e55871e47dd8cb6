/**
 * The reads of live links (docs/api.md): one by its code, the newest of an original URL, and the
 * list. Each answers an outcome, `unavailable` included when the store cannot be read (a database
 * down), so no door meets the storage contract's error. A list's query is checked here
 * (`list-query.ts`) whichever door asked.
 */
import { mapMaybe, type LinkPage, type LinkRecord, type LinkStore, type MaybePromise } from '../store/link-store.ts';
import { domainScope, type Domains, type KeyOf } from './domains.ts';
import { ownLinksOnly, type Principal } from './access.ts';
import { checkListQuery, type ListQuery } from './list-query.ts';
import { guarded, NOT_FOUND, outage, refused, type Found, type Invalid, type NotFound, type Unavailable } from './outcomes.ts';
import type { UrlListing, UrlRecord } from './record.ts';
import { Refusal, unstorableText } from './refusal.ts';

export type GetOutcome = Found | Invalid | NotFound | Unavailable;
export type LookupOutcome = Found | Invalid | NotFound | Unavailable;
/** A page of the list to read in slices (`UrlListing`): a database's slices are promises, which reject when it cannot be read. */
export type Listing = UrlListing<MaybePromise<UrlRecord[]>> & { ok: true };
export type ListingOutcome = Listing | Invalid | Unavailable;
export type ListOutcome = { ok: true; total: number; urls: UrlRecord[] } | Invalid | Unavailable;

export interface ReadDeps {
  store: LinkStore;
  /** Unix seconds now. */
  seconds: () => number;
  view: (record: LinkRecord) => UrlRecord;
  keyOf: KeyOf;
  /** Which domain a list's `domain` names (`Domains.named`). */
  named: Domains['named'];
}

const INVALID_URL: Invalid = { ok: false, error: 'invalid', detail: 'url must be an absolute URL such as https://example.com/page' };
const URL_REQUIRED: Invalid = { ok: false, error: 'invalid', detail: 'url is required' };

export function createReads({ store, seconds, view, keyOf, named }: ReadDeps) {
  const found = (record: LinkRecord | undefined): Found | NotFound => (record ? { ok: true, record: view(record) } : NOT_FOUND);

  /**
   * Live records newest first, paged and filtered, frozen when called: a long list can be read in
   * slices across event-loop turns (see `UrlListing`); `release` it when done. For `who`, only
   * the links its role lets it see (an `editor`'s own).
   */
  async function listing(query: ListQuery, who?: Principal): Promise<ListingOutcome> {
    const filter = checkListQuery(query);
    if (filter instanceof Refusal) return refused(filter);
    // Absent or empty: every domain's links; else only those of the domain it names. A key for
    // one domain lists that domain's (`domainScope`).
    const domain = domainScope(named, query.domain, who);
    if (domain instanceof Refusal) return refused(domain);
    let page: LinkPage;
    try {
      const author = who === undefined ? undefined : ownLinksOnly(who);
      page = await store.list({ limit: filter.limit, offset: filter.offset, now: seconds(), q: filter.q, tags: filter.tags, author, domain });
    } catch (err) {
      return outage(err);
    }
    return {
      ok: true,
      total: page.total,
      count: page.count,
      slice: (from, to) => mapMaybe(page.slice(from, to), (records) => records.map(view)),
      release: () => page.release(),
    };
  }

  return {
    /**
     * The live link of `code` on the domain `domain` names (absent: the default one). A code outside
     * the code alphabet names no link, so no store is asked (MCP's codes are unchecked).
     */
    async get(code: string, domain?: unknown): Promise<GetOutcome> {
      const key = keyOf(code, domain);
      if (typeof key !== 'string') return key;
      return guarded(() => mapMaybe(store.get(key, seconds()), found));
    },

    /**
     * The newest live record whose original URL equals `input` once normalized; of the domain
     * `domain` names, when given (`default` the default one), else of any.
     */
    async lookup(input: unknown, domain?: unknown): Promise<LookupOutcome> {
      if (input === undefined || input === null || input === '') return URL_REQUIRED;
      const unstorable = typeof input === 'string' ? unstorableText(input, 'url') : undefined;
      if (unstorable !== undefined) return { ok: false, error: 'invalid', detail: unstorable };
      let href: string;
      try {
        href = new URL(String(input)).href;
      } catch {
        return INVALID_URL;
      }
      const on = domain === undefined || domain === '' ? undefined : named(domain);
      if (on instanceof Refusal) return refused(on);
      return guarded(() => mapMaybe(store.newestByUrl(href, seconds(), on), found));
    },

    listing,

    /** The whole page at once; `total` counts every live record the filters keep. */
    async list(query: ListQuery, who?: Principal): Promise<ListOutcome> {
      const page = await listing(query, who);
      if (!page.ok) return page;
      try {
        return { ok: true, total: page.total, urls: await page.slice(0, page.count) };
      } catch (err) {
        return outage(err);
      } finally {
        page.release();
      }
    },
  };
}
