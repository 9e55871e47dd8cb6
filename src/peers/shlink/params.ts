/**
 * Shlink's request parameters and bodies in our terms (docs/compat.md): the list's query, a visit
 * list's query, and the bodies of a create and an edit. Pure: each returns what the service is to
 * be asked, or the `invalid-data` problem naming Shlink's field. What a URL, a code, a title, a
 * search or a tag may be is decided by the service's rules (a tag filter this door applies itself,
 * `excludeTags` or several tags of which any will do, is checked by the same rule as the one the
 * service applies); only what is Shlink's alone is decided here.
 */
import { checkSearch, checkTagFilter } from '../../links/list-query.ts';
import type { LinkEdit } from '../../links/service.ts';
import { Refusal } from '../../links/validate.ts';
import { MAX_TIME, parseTime, RangeRefusal, zoneOf } from '../../visits/range.ts';
import { invalidData, Problem } from './problems.ts';

const DAY = 86400;

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
 * a deadline (`latest` Infinity: `validUntil`) may be later, up to the year 9999 the format spells.
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

/** What the create and the edit bodies share: the deadline and the refused options. */
export interface Limits {
  /** The code lengths this service generates (MIN_SHORT_LENGTH..MAX_SHORT_LENGTH). */
  minShortLength: number;
  maxShortLength: number;
}

/**
 * `validUntil` as a retention counted from `createdAt`: whole days, rounded up, so the link lives
 * at least until then. Null or absent: forever (0). A deadline not after `createdAt` cannot be a
 * retention.
 */
export function retentionUntil(raw: unknown, createdAt: number): Parsed<number | undefined> {
  if (raw === undefined) return undefined;
  if (raw === null) return 0;
  const until = typeof raw === 'string' ? isoSeconds(raw, Number.POSITIVE_INFINITY) : undefined;
  if (until === undefined) return invalidData(['validUntil'], 'validUntil must be an ISO 8601 date, or null');
  if (until <= createdAt) return invalidData(['validUntil'], "validUntil must be later than the short URL's creation");
  return Math.ceil((until - createdAt) / DAY);
}

/** Options Shlink has and this service has not: refused unless absent, null or empty. */
function refusedOptions(body: Readonly<Record<string, unknown>>): Problem | undefined {
  const given = (name: string): boolean => body[name] !== undefined && body[name] !== null && body[name] !== '';
  if (given('validSince')) return invalidData(['validSince'], 'validSince is not supported: a link is valid from its creation');
  if (given('pathPrefix')) return invalidData(['pathPrefix'], 'pathPrefix is not supported');
  if (Array.isArray(body['redirectRules']) && body['redirectRules'].length > 0) return invalidData(['redirectRules'], 'redirect rules are not supported');
  for (const name of ['crawlable', 'forwardQuery', 'findIfExists']) {
    if (body[name] !== undefined && body[name] !== null && typeof body[name] !== 'boolean') return invalidData([name], `${name} must be true or false`);
  }
  return undefined;
}

export interface CreateRequest {
  /** `ShortenInput` fields, unchecked: the service checks them. */
  url: unknown;
  code: unknown;
  title: unknown;
  tags: unknown;
  maxVisits: unknown;
  retentionDays: number;
  /** The deadline asked for (Unix seconds), to compare with an existing link's; undefined: none. */
  validUntil: number | undefined;
  findIfExists: boolean;
  /** The link's domain as sent (a host; null, empty or absent: the default one), checked by the service. */
  domain: unknown;
}

/** The body of `POST /rest/v3/short-urls`, at `now` (Unix seconds, the link's creation). */
export function parseCreateBody(body: Readonly<Record<string, unknown>>, limits: Limits, now: number): Parsed<CreateRequest> {
  const refused = refusedOptions(body);
  if (refused !== undefined) return refused;
  const length = body['shortCodeLength'];
  if (
    length !== undefined &&
    length !== null &&
    (typeof length !== 'number' || !Number.isInteger(length) || length < limits.minShortLength || length > limits.maxShortLength)
  ) {
    return invalidData(['shortCodeLength'], `shortCodeLength must be an integer from ${limits.minShortLength} to ${limits.maxShortLength}`);
  }
  const retention = retentionUntil(body['validUntil'], now);
  if (isProblem(retention)) return retention;
  return {
    url: body['longUrl'],
    code: body['customSlug'],
    title: body['title'],
    tags: body['tags'],
    maxVisits: body['maxVisits'],
    retentionDays: retention ?? 0,
    validUntil: typeof body['validUntil'] === 'string' ? isoSeconds(body['validUntil'], Number.POSITIVE_INFINITY) : undefined,
    findIfExists: body['findIfExists'] === true,
    domain: body['domain'],
  };
}

/**
 * The edit for `service.update` (only the fields the body gives), from the body of
 * `PATCH /rest/v3/short-urls/:code` of a link created at `createdAt`. Tags of null clear them, as Shlink.
 */
export function parseEditBody(body: Readonly<Record<string, unknown>>, createdAt: number): Parsed<LinkEdit> {
  const refused = refusedOptions(body);
  if (refused !== undefined) return refused;
  const edit: LinkEdit = {};
  if (body['longUrl'] !== undefined) edit.url = body['longUrl'];
  if (body['title'] !== undefined) edit.title = body['title'];
  if (body['tags'] !== undefined) edit.tags = body['tags'] === null ? [] : body['tags'];
  if (body['maxVisits'] !== undefined) edit.maxVisits = body['maxVisits'];
  const retention = retentionUntil(body['validUntil'], createdAt);
  if (isProblem(retention)) return retention;
  if (retention !== undefined) edit.retentionDays = retention;
  return edit;
}
