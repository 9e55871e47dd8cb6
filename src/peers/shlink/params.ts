/**
 * Shlink's request parameters in our terms (docs/compat.md): the list's query and a visit list's
 * query (the bodies of a create and an edit are `bodies.ts`'s). Pure: each returns what the service
 * is to be asked, or the `invalid-data` problem naming Shlink's field. What a URL, a code, a title, a
 * search or a tag may be is decided by the service's rules (a tag filter this door applies itself,
 * `excludeTags` or several tags of which any will do, is checked by the same rule as the one the
 * service applies); only what is Shlink's alone is decided here.
 */
import { checkSearch, checkTagFilter } from '../../links/list-query.ts';
import { Refusal } from '../../links/validate.ts';
import { MAX_TIME, parseTime, RangeRefusal, zoneOf } from '../../visits/range.ts';
import { invalidData, Problem } from './problems.ts';

/** `field-DIR` orderings of the short URL list (Shlink's `OrderableField`). */
export const ORDER_FIELDS = ['dateCreated', 'shortCode', 'longUrl', 'title', 'visits', 'nonBotVisits'] as const;
export type OrderField = (typeof ORDER_FIELDS)[number];
export type TagsMode = 'any' | 'all';

export interface ListParams {
  page: number;
  /** -1: every item on one page. */
  itemsPerPage: number;
  searchTerm: string | undefined;
  tags: string[];
  tagsMode: TagsMode;
  excludeTags: string[];
  excludeTagsMode: TagsMode;
  order: { field: OrderField; dir: 'ASC' | 'DESC' };
  /** Unix seconds, inclusive both (Shlink's `dateCreated >= startDate`, `<= endDate`). */
  startDate: number | undefined;
  endDate: number | undefined;
  excludeMaxVisitsReached: boolean;
  /** The links of one domain (a host, or DEFAULT); undefined: every domain's. */
  domain: string | undefined;
  /** Leave out the links past their `valid_until` (Shlink's links past `validUntil`). */
  excludePastValidUntil: boolean;
}

export interface VisitParams {
  page: number;
  itemsPerPage: number;
  /** Unix seconds: events with `from <= time < to`; undefined: from the first, to the last. */
  from: number | undefined;
  to: number | undefined;
  excludeBots: boolean;
}

/** The problem, or the value. */
export type Parsed<T> = T | Problem;

export const isProblem = (value: unknown): value is Problem => value instanceof Problem;

const UTC = zoneOf('UTC')!;

/**
 * An ISO 8601 date or time as Unix seconds, read as every door of this service reads one
 * (`visits/range.ts`); a time without an offset is UTC. A visit's time ends in 2106 (`MAX_TIME`);
 * an instant of a link (`latest`: `validUntil`, a rule's date) may be later, up to the year 9999.
 */
export function isoSeconds(text: string, latest?: number): number | undefined {
  const seconds = parseTime('from', text, UTC, latest);
  return seconds instanceof RangeRefusal ? undefined : seconds;
}

function optionalDate(query: URLSearchParams, name: string): Parsed<number | undefined> {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  return isoSeconds(raw) ?? invalidData([name], `${name} must be an ISO 8601 date, such as 2026-05-01 or 2026-05-01T10:00:00+02:00`);
}

function positive(query: URLSearchParams, name: string, fallback: number, all: boolean): Parsed<number> {
  const raw = query.get(name);
  if (raw === null || raw === '') return fallback;
  const n = /^-?\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (n >= 1) return n;
  if (all && n === -1) return -1;
  return invalidData([name], `${name} must be an integer of 1 or more${all ? ', or -1 for every item' : ''}`);
}

function mode(query: URLSearchParams, name: string): Parsed<TagsMode> {
  const raw = query.get(name);
  if (raw === null || raw === '' || raw === 'any') return 'any';
  if (raw === 'all') return 'all';
  return invalidData([name], `${name} must be any or all`);
}

/** A repeatable list parameter, as PHP reads it: `tags[]=a&tags[]=b`, or `tags=a`. */
const repeated = (query: URLSearchParams, name: string): string[] => [...query.getAll(`${name}[]`), ...query.getAll(name)].filter((t) => t !== '');

/** `true` as Shlink reads these flags. */
const flag = (query: URLSearchParams, name: string): boolean => query.get(name) === 'true';

/** The service's refusal of the parameter `name`, its reason naming it as Shlink's clients know it. */
function refusedParam(name: string, refusal: Refusal): Problem {
  return invalidData([name], refusal.detail.replace(/^(?:q|tag)\b/, name));
}

/**
 * `searchTerm` of a list (short URLs, tags), by the rule of the service's search (1–200 characters
 * a store can hold); `''` when absent or empty, which filters nothing.
 */
export function parseSearchTerm(query: URLSearchParams): Parsed<string> {
  const search = query.get('searchTerm') ?? '';
  if (search === '') return '';
  const checked = checkSearch(search);
  return checked instanceof Refusal ? refusedParam('searchTerm', checked) : checked;
}

/** The tags of a tag filter `name` by the rule of the service's tag filter: trimmed, in NFC (as stored), distinct. */
function tagFilter(query: URLSearchParams, name: string): Parsed<string[]> {
  const checked = checkTagFilter(repeated(query, name), false);
  return checked instanceof Refusal ? refusedParam(name, checked) : (checked ?? []);
}

/** The query of `GET /rest/v3/short-urls`. */
export function parseListParams(query: URLSearchParams): Parsed<ListParams> {
  const page = positive(query, 'page', 1, false);
  if (isProblem(page)) return page;
  const itemsPerPage = positive(query, 'itemsPerPage', 10, true);
  if (isProblem(itemsPerPage)) return itemsPerPage;
  const search = parseSearchTerm(query);
  if (isProblem(search)) return search;
  const tags = tagFilter(query, 'tags');
  if (isProblem(tags)) return tags;
  const excludeTags = tagFilter(query, 'excludeTags');
  if (isProblem(excludeTags)) return excludeTags;
  const tagsMode = mode(query, 'tagsMode');
  if (isProblem(tagsMode)) return tagsMode;
  const excludeTagsMode = mode(query, 'excludeTagsMode');
  if (isProblem(excludeTagsMode)) return excludeTagsMode;
  const order = parseOrder(query.get('orderBy'));
  if (isProblem(order)) return order;
  const startDate = optionalDate(query, 'startDate');
  if (isProblem(startDate)) return startDate;
  const endDate = optionalDate(query, 'endDate');
  if (isProblem(endDate)) return endDate;
  const domain = query.get('domain');
  return {
    page,
    itemsPerPage,
    searchTerm: search === '' ? undefined : search,
    tags,
    tagsMode,
    excludeTags,
    excludeTagsMode,
    order,
    startDate,
    endDate,
    excludeMaxVisitsReached: flag(query, 'excludeMaxVisitsReached'),
    domain: domain === null || domain === '' ? undefined : domain,
    excludePastValidUntil: flag(query, 'excludePastValidUntil'),
  };
}

/** `orderBy`: `field-ASC` or `field-DESC`; absent: newest first, as Shlink. */
export function parseOrder(raw: string | null): Parsed<ListParams['order']> {
  if (raw === null || raw === '') return { field: 'dateCreated', dir: 'DESC' };
  const [field, dir = 'ASC'] = raw.split('-');
  if (!(ORDER_FIELDS as readonly string[]).includes(field!) || (dir !== 'ASC' && dir !== 'DESC')) {
    return invalidData(['orderBy'], `orderBy must be one of ${ORDER_FIELDS.join(', ')}, followed by -ASC or -DESC`);
  }
  return { field: field as OrderField, dir };
}

/**
 * The query of a visit list. As Shlink: every visit on one page unless `itemsPerPage` says
 * otherwise, a page or size below 1 means the default, and `excludeBots` counts as set whatever its
 * value. `endDate` is inclusive (Shlink's `<=`), so the range ends a second after it.
 */
export function parseVisitParams(query: URLSearchParams): Parsed<VisitParams> {
  const int = (name: string): number | undefined => {
    const raw = query.get(name);
    return raw !== null && /^-?\d{1,15}$/.test(raw) ? Number(raw) : undefined;
  };
  const page = int('page');
  const perPage = int('itemsPerPage');
  const startDate = optionalDate(query, 'startDate');
  if (isProblem(startDate)) return startDate;
  const endDate = optionalDate(query, 'endDate');
  if (isProblem(endDate)) return endDate;
  const to = endDate === undefined ? undefined : Math.min(endDate + 1, MAX_TIME);
  if (startDate !== undefined && to !== undefined && startDate >= to) return invalidData(['startDate', 'endDate'], 'startDate must not be after endDate');
  const from = startDate;
  return {
    page: page === undefined || page < 1 ? 1 : page,
    itemsPerPage: perPage === undefined || perPage < 1 ? -1 : perPage,
    from,
    to,
    excludeBots: query.has('excludeBots'),
  };
}
