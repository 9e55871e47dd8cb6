/**
 * The lists of Shlink's API over the service (docs/compat.md): short URLs filtered, ordered and
 * paged as Shlink does, each link's visits summary, and the tags with their counts.
 *
 * The service lists links newest first, filtered by text and by tags (links having all), and
 * pages that order itself. A Shlink list that asks only that (newest or oldest first, no dates,
 * one tag or all of several) reads just its page. Anything else — another ordering, a creation
 * date range, any of several tags, excluded tags, used-up or past links left out — is a walk over every matching link, in slices,
 * kept in memory for the one request (`links/walk.ts`: the walk and the sort give the event loop a
 * turn every few milliseconds, so 100k links never hold it). A link's bot visits are its bot events, counted by the
 * service's visit page (`service.visits`, bots only, one event: the count comes with it); a link
 * with no events asks nothing. Ordering by `nonBotVisits` asks that of every matching link.
 */
import { Refusal } from '../../links/refusal.ts';
import type { Principal } from '../../links/access.ts';
import type { UrlRecord } from '../../links/record.ts';
import type { Failure, Service } from '../../links/service.ts';
import { recordsAt, sortInTurns, walk, type Walkable } from '../../links/walk.ts';
import type { ListParams } from './params.ts';
import { pageBounds, summary, type VisitsSummary } from './shapes.ts';

/** Visit counts asked of the store at once when many links need theirs. */
const PARALLEL = 8;

/**
 * The bot events of a live link: 0 when it has none, or is gone since it was listed; the failure
 * when the store cannot say (a database down), so the door answers its 503 and never a count that
 * silently left the bots out.
 */
export async function botVisits(service: Service, record: UrlRecord): Promise<number | Failure> {
  if (record.visit_count - record.untracked_visits <= 0) return 0;
  const page = await service.visits(record.short_code, { bots: 'only' }, { limit: 1 }, record.domain);
  if (page.ok) return page.total;
  return page.error === 'not_found' ? 0 : page;
}

/** The bot counts of several links, or the first failure among them. */
async function botCounts(service: Service, records: readonly UrlRecord[]): Promise<number[] | Failure> {
  const bots = await mapBounded(records, (r) => botVisits(service, r));
  return bots.find((b): b is Failure => typeof b !== 'number') ?? (bots as number[]);
}

/**
 * The visits of every link `who` may list, and how many of them bots made: the overview of an
 * editor, whose links are not the instance's.
 */
export async function listedTotals(service: Service, who: Principal): Promise<{ visits: number; bots: number } | Failure> {
  const listing = await service.listing({ limit: undefined, offset: 0 }, who);
  if (!listing.ok) return listing;
  let visits = 0;
  let bots = 0;
  let failure: Failure | undefined;
  try {
    await walk(listing, async (slice) => {
      if (failure !== undefined) return;
      const counts = await botCounts(service, slice);
      if (!Array.isArray(counts)) failure = counts;
      else
        slice.forEach((r, i) => {
          visits += r.visit_count;
          bots += counts[i]!;
        });
    });
  } finally {
    listing.release();
  }
  return failure ?? { visits, bots };
}

/** `f` of each item, at most `PARALLEL` at a time, in order. */
async function mapBounded<T, U>(items: readonly T[], f: (item: T) => Promise<U>): Promise<U[]> {
  const out: U[] = new Array<U>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, worker));
  return out;
}

/** The visits summary of each record, in order. */
export async function summaries(service: Service, records: readonly UrlRecord[]): Promise<VisitsSummary[] | Failure> {
  const bots = await botCounts(service, records);
  if (!Array.isArray(bots)) return bots;
  return records.map((r, i) => summary(r.visit_count, bots[i]!));
}

/** A page of the short URL list: the records on it, and how many matched in all. */
export interface ShortUrlPage {
  total: number;
  records: UrlRecord[];
}

/** True when the service's own order and filters answer `params` without a walk. */
function servedAsListed(p: ListParams): boolean {
  return (
    p.order.field === 'dateCreated' &&
    p.startDate === undefined &&
    p.endDate === undefined &&
    !p.excludeMaxVisitsReached &&
    !p.excludePastValidUntil &&
    p.excludeTags.length === 0 &&
    (p.tags.length <= 1 || p.tagsMode === 'all')
  );
}

const hasAny = (tags: readonly string[], wanted: readonly string[]): boolean => wanted.some((t) => tags.includes(t));
const hasAll = (tags: readonly string[], wanted: readonly string[]): boolean => wanted.every((t) => tags.includes(t));

/**
 * Whether a record the service listed passes what the service could not filter, at `now` (Unix
 * seconds): from its `valid_until` on a link answers as expired, so it is past then.
 */
function passes(r: UrlRecord, p: ListParams, now: number): boolean {
  if (p.startDate !== undefined && r.created_at < p.startDate) return false;
  if (p.excludePastValidUntil && r.valid_until !== null && r.valid_until <= now) return false;
  if (p.endDate !== undefined && r.created_at > p.endDate) return false;
  if (p.excludeMaxVisitsReached && r.max_visits !== null && r.visit_count >= r.max_visits) return false;
  if (p.tags.length > 1 && p.tagsMode === 'any' && !hasAny(r.tags, p.tags)) return false;
  if (p.excludeTags.length > 0 && (p.excludeTagsMode === 'any' ? hasAny(r.tags, p.excludeTags) : hasAll(r.tags, p.excludeTags))) return false;
  return true;
}

/** Texts by code unit, numbers by value. */
const compareKeys = <K extends string | number>(a: K, b: K): number => (a < b ? -1 : a > b ? 1 : 0);
const compareText: (a: string, b: string) => number = compareKeys;

/**
 * The sort key of each ordering but `dateCreated` (the list's own order) and `nonBotVisits`
 * (which needs counts first); a title absent sorts as empty, as Shlink.
 */
const KEY: Readonly<Record<'shortCode' | 'longUrl' | 'title' | 'visits', (r: UrlRecord) => string | number>> = {
  shortCode: (r) => r.short_code,
  longUrl: (r) => r.original_url,
  title: (r) => r.title ?? '',
  visits: (r) => r.visit_count,
};

/** The page of the short URL list that `p` asks for at `now` (Unix seconds), of the links `who` may list (an editor: its own). */
export async function listShortUrls(service: Service, p: ListParams, who: Principal, now: number): Promise<ShortUrlPage | Failure> {
  // A domain that is not one of this service's holds no links.
  const domain = p.domain === undefined ? undefined : service.domains.named(p.domain);
  if (domain instanceof Refusal) return { total: 0, records: [] };
  const listing = await service.listing(
    {
      limit: undefined,
      offset: 0,
      q: p.searchTerm,
      tags: p.tags.length > 0 && (p.tags.length === 1 || p.tagsMode === 'all') ? p.tags : undefined,
      domain: domain === null ? 'default' : domain,
    },
    who,
  );
  if (!listing.ok) return listing;
  try {
    if (servedAsListed(p)) {
      const [from, to] = pageBounds(p.page, p.itemsPerPage, listing.total);
      if (p.order.dir === 'DESC') return { total: listing.total, records: await listing.slice(from, to) };
      // Oldest first: the same page counted from the list's other end.
      const records = await listing.slice(listing.total - to, listing.total - from);
      return { total: listing.total, records: records.reverse() };
    }
    const matched = await matching(service, listing, p, now);
    if (!('positions' in matched)) return matched;
    const { positions, keys } = matched;
    const order = await ordered(positions.length, keys, p.order);
    const [from, to] = pageBounds(p.page, p.itemsPerPage, order.length);
    return {
      total: order.length,
      records: await recordsAt(
        listing,
        order.slice(from, to).map((i) => positions[i]!),
      ),
    };
  } finally {
    listing.release();
  }
}

/**
 * The links of a walk that pass `p`: their positions in the listing (newest first) and their sort
 * keys (none when the list's own order is asked). Ordering by non-bot visits asks each kept link's
 * bot visits, slice by slice as the walk goes.
 */
async function matching(
  service: Service,
  listing: Walkable<UrlRecord>,
  p: ListParams,
  now: number,
): Promise<{ positions: number[]; keys: (string | number)[] } | Failure> {
  const positions: number[] = [];
  const keys: (string | number)[] = [];
  const field = p.order.field;
  let failure: Failure | undefined;
  await walk(listing, async (records, from) => {
    if (failure !== undefined) return;
    const passing: UrlRecord[] = [];
    for (let k = 0; k < records.length; k++) {
      if (!passes(records[k]!, p, now)) continue;
      positions.push(from + k);
      passing.push(records[k]!);
    }
    if (field === 'dateCreated') return;
    if (field !== 'nonBotVisits') {
      for (const r of passing) keys.push(KEY[field](r));
      return;
    }
    const bots = await botCounts(service, passing);
    if (!Array.isArray(bots)) failure = bots;
    else for (let i = 0; i < passing.length; i++) keys.push(passing[i]!.visit_count - bots[i]!);
  });
  return failure ?? { positions, keys };
}

/**
 * The indexes of the `count` kept links in `order`: by `keys` (a stable sort, so ties stay newest
 * first), or, with no keys, the list's own order, newest first or reversed.
 */
async function ordered(count: number, keys: readonly (string | number)[], order: ListParams['order']): Promise<number[]> {
  const sign = order.dir === 'ASC' ? 1 : -1;
  const indexes = Array.from({ length: count }, (_, i) => i);
  if (order.field === 'dateCreated') return order.dir === 'DESC' ? indexes : indexes.reverse();
  return sortInTurns(indexes, (a, b) => sign * compareKeys(keys[a]!, keys[b]!));
}

/** A tag with the number of live links having it and their visits. */
export interface TagStats {
  tag: string;
  shortUrlsCount: number;
  visitsSummary: VisitsSummary;
}

/**
 * Every tag of a live link `who` may list (an editor: its own), sorted, with its counts when
 * `withVisits` (which asks each link with events for its bot visits). A walk over every link: the
 * service keeps no table of tags.
 */
export async function tagTable(service: Service, withVisits: boolean, who: Principal): Promise<TagStats[] | Failure> {
  const listing = await service.listing({ limit: undefined, offset: 0 }, who);
  if (!listing.ok) return listing;
  const byTag = new Map<string, { links: number; visits: number; bots: number }>();
  let failure: Failure | undefined;
  try {
    await walk(listing, async (slice) => {
      if (failure !== undefined) return;
      const records = slice.filter((r) => r.tags.length > 0);
      const bots = withVisits ? await botCounts(service, records) : [];
      if (!Array.isArray(bots)) {
        failure = bots;
        return;
      }
      records.forEach((r, i) => {
        for (const tag of r.tags) {
          const row = byTag.get(tag) ?? { links: 0, visits: 0, bots: 0 };
          row.links++;
          row.visits += r.visit_count;
          row.bots += bots[i] ?? 0;
          byTag.set(tag, row);
        }
      });
    });
  } finally {
    listing.release();
  }
  if (failure !== undefined) return failure;
  return [...byTag.entries()]
    .sort(([a], [b]) => compareText(a, b))
    .map(([tag, row]) => ({ tag, shortUrlsCount: row.links, visitsSummary: summary(row.visits, row.bots) }));
}

/**
 * Tags orderings (Shlink's tags list): `tag` (the default), `shortUrlsCount`, `visits`,
 * `nonBotVisits`. A `Map`, since the key is the request's text: a plain object would answer
 * `__proto__` or `constructor` with what every object inherits.
 */
export const TAG_ORDERS: ReadonlyMap<string, (a: TagStats, b: TagStats) => number> = new Map([
  ['tag', (a: TagStats, b: TagStats) => compareText(a.tag, b.tag)],
  ['shortUrlsCount', (a: TagStats, b: TagStats) => a.shortUrlsCount - b.shortUrlsCount],
  ['visits', (a: TagStats, b: TagStats) => a.visitsSummary.total - b.visitsSummary.total],
  ['nonBotVisits', (a: TagStats, b: TagStats) => a.visitsSummary.nonBots - b.visitsSummary.nonBots],
]);
