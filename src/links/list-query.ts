/**
 * What a list may ask (docs/api.md, list): a page, a search and a tag filter, checked once here for
 * every door. A door hands the service the values as it received them (`ListQuery`): REST's
 * query-string text, MCP's typed arguments, Shlink's parameters; the service answers a refusal
 * with the reason REST has always given. Pure.
 */
import { codePoints, Refusal, unstorableText } from './refusal.ts';
import { checkTags, MAX_LIMIT, MAX_SEARCH_LENGTH } from './validate.ts';

/** A list or a search as a door received it. */
export interface ListQuery {
  /**
   * Links on the page, 1–1000: a number (JSON, MCP) or decimal digits (a query string). Absent:
   * every live link from `offset` on.
   */
  limit?: number | string | undefined;
  /** Links skipped first, 0 or more, a number or digits like `limit`; absent: 0. */
  offset?: number | string | undefined;
  /** Keeps the links whose code, original URL or title contains it, case-insensitively; absent: no filter. */
  q?: string | undefined;
  /** Keeps the links having every one of these tags, compared exactly; absent or none: no filter. */
  tags?: readonly string[] | undefined;
  /**
   * The tags came as text (a query string's repeated `tag`): each value may hold several,
   * separated by commas, and an empty one is none. Otherwise each value is one tag.
   */
  tagsAsText?: boolean | undefined;
  /**
   * Keeps the links of one domain (`domains.ts`): a host of this service, or `default` (or the
   * default host) for the default one; absent or empty: every domain's.
   */
  domain?: unknown;
}

/** A page of the list: `limit` undefined = every link from `offset` on. */
export interface Paging {
  limit: number | undefined;
  offset: number;
}

/** A query the rules accepted: what the store is asked. */
export interface ListFilter extends Paging {
  q: string | undefined;
  /** Trimmed, in NFC, distinct, sorted; undefined: no filter. */
  tags: string[] | undefined;
}

/** `limit` 1–1000 and `offset` ≥ 0, both optional; a number must be an integer, text decimal digits. */
export function checkPaging(limit: number | string | undefined, offset: number | string | undefined): Paging | Refusal {
  const paging: Paging = { limit: undefined, offset: 0 };
  if (limit !== undefined) {
    const value = typeof limit === 'string' ? (/^\d{1,4}$/.test(limit) ? Number(limit) : Number.NaN) : limit;
    if (!Number.isInteger(value) || value < 1 || value > MAX_LIMIT) return new Refusal(`limit must be an integer from 1 to ${MAX_LIMIT}`);
    paging.limit = value;
  }
  if (offset !== undefined) {
    const value = typeof offset === 'string' ? (/^\d{1,15}$/.test(offset) ? Number(offset) : Number.NaN) : offset;
    if (!Number.isSafeInteger(value) || value < 0) return new Refusal('offset must be an integer of 0 or more');
    paging.offset = value;
  }
  return paging;
}

/**
 * `q`: 1–200 characters (code points) that every store can hold, matched case-insensitively
 * against codes, original URLs and titles by the store.
 */
export function checkSearch(q: string): string | Refusal {
  const length = codePoints(q);
  if (length < 1 || length > MAX_SEARCH_LENGTH) return new Refusal(`q must be 1 to ${MAX_SEARCH_LENGTH} characters long, not ${length}`);
  const unstorable = unstorableText(q, 'q');
  return unstorable === undefined ? q : new Refusal(unstorable);
}

/**
 * The tag filter: each tag by the rule of a link's tags (`checkTags`: trimmed, in NFC, 1–50
 * characters without a comma, at most 20), links having all of them; undefined when there is
 * none. The reasons name the list's parameter, `tag`.
 */
export function checkTagFilter(values: readonly string[], asText: boolean): string[] | undefined | Refusal {
  if (values.length === 0) return undefined;
  const checked = checkTags(values, asText);
  if (checked instanceof Refusal) return new Refusal(checked.detail.replace(/^tags/, 'tag'));
  return checked.length === 0 ? undefined : checked;
}

/** A list query by every rule above, in the order REST has always checked them: paging, `q`, `tag`. */
export function checkListQuery(query: ListQuery): ListFilter | Refusal {
  const paging = checkPaging(query.limit, query.offset);
  if (paging instanceof Refusal) return paging;
  const q = query.q === undefined ? undefined : checkSearch(query.q);
  if (q instanceof Refusal) return q;
  const tags = query.tags === undefined ? undefined : checkTagFilter(query.tags, query.tagsAsText === true);
  if (tags instanceof Refusal) return tags;
  return { ...paging, q, tags };
}
