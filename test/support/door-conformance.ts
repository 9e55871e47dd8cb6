/**
 * The door conformance suite (docs/architecture.md, tests): one table of cases, run through every
 * door onto the links (`door-adapters.ts`: REST, MCP, Shlink's REST v3, YOURLS' API) against one
 * server per store, each door judged by its own shapes and all by the same verdict — accepted,
 * refused with the same reason, not found, unavailable, conflict, rate limited. What
 * `store-conformance.ts` is for the two stores, this is for the doors: a rule decided below the
 * doors gives one answer at every door, on every store.
 *
 * A case is a request in the service's terms (a create, a read, an edit, a delete, a list), made
 * once per door with values no other door's request uses (a code, a URL, a client address of its
 * own), and what every door must answer. Where a door cannot express a case (an operation it lacks,
 * text its wire format cannot carry) the case names it in `notOffered`, and the door's adapter must
 * agree; where a door answers a refusal in its own words, not the service's reason, the case names
 * it in `verdictOnly` and only the verdict is compared. Both notes say why, and both are checked:
 * a door that gains the operation, or starts to carry the reason, fails until its note is removed.
 *
 * The server: admin key, Shlink's and YOURLS' surfaces on, codes of 6 to 12 characters, URLs of at
 * most 2048, a create limit of 1 a minute per client address (each request says its address in
 * `X-Forwarded-For`, which the server trusts from one proxy), and a fake clock that stands still
 * once the expired link has expired. The cases that need the store down run last, in one group.
 */
import assert from 'node:assert/strict';
import { after, before, test, type TestContext } from 'node:test';
import type { ShortenerOptions } from '../../src/app.ts';
import { request } from './helpers.ts';
import {
  ADAPTERS,
  DOORS,
  type Caller,
  type CreateInput,
  type DoorName,
  type EditChanges,
  type ListQuery,
  type Outcome,
  type Verdict,
} from './door-adapters.ts';

const KEY = 'door-admin-key';
const MIN_CODE = 6;
const MAX_CODE = 12;
const MAX_URL = 2048;
const MAX_TITLE = 512;
const MAX_TAG = 50;
const MAX_TAGS = 20;
const MAX_SEARCH = 200;
const MAX_LIMIT = 1000;
const MAX_RETENTION = 36_500;
const MAX_VISITS = 2_147_483_647;
const T0 = Date.UTC(2026, 0, 5, 12, 0, 0);
const DAY_MS = 86_400_000;

/** The server every case runs against (the store's own settings are added by its opener). */
export function doorSettings(now: () => number): ShortenerOptions {
  return {
    apiKeys: [KEY],
    shlinkApi: true,
    yourlsApi: true,
    minShortLength: MIN_CODE,
    maxShortLength: MAX_CODE,
    maxUrlLength: MAX_URL,
    createRateLimit: '1/min',
    trustProxy: 1,
    now,
    logLevel: 'silent',
  };
}

/** A store the suite runs on: how to open a server on a fresh one, and how to take it down. */
export interface StoreUnderTest {
  name: string;
  /** Why the store cannot run here (no PostgreSQL installed); its tests are then listed as not run. */
  skip?: string | undefined;
  /** A server of `settings` on a fresh store, listening on 127.0.0.1. */
  open(settings: ShortenerOptions): Promise<ServedStore>;
  /** What the service says while the store cannot write (or read). */
  outageReason: string;
  /** Reads still work while the store is down (the log store answers them from memory). */
  readsDuringOutage: boolean;
}

export interface ServedStore {
  port: number;
  /** Writes (and, on a database, reads) fail from now on, until `up`. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

// ---- The table --------------------------------------------------------------------------------

/** One request, in the service's terms. */
export type Step =
  | { operation: 'create'; input: CreateInput }
  | { operation: 'get'; code: string }
  | { operation: 'edit'; code: string; changes: EditChanges }
  | { operation: 'delete'; code: string }
  | { operation: 'list'; query: ListQuery };

export interface Expectation {
  verdict: Verdict;
  /** The service's reason, which every door must carry (its own field names mapped back). */
  reason?: string;
}

/** Values of one case at one door, used by no other request of the run. */
export interface Unique {
  /** An http URL of `length` characters (`variant` tells two of one case apart). */
  url(length?: number, variant?: string): string;
  /** A custom code of `length` characters. */
  code(length: number): string;
  /** The code of a live link made for this case and door alone. */
  fresh(): Promise<string>;
}

export interface Case {
  name: string;
  step(u: Unique): Step | Promise<Step>;
  /** Made first through the same door, as the same client, and accepted. */
  first?(u: Unique): Step;
  expect: Expectation | ((store: StoreUnderTest) => Expectation);
  /** Doors that cannot express this case, and why. */
  notOffered?: Partial<Record<DoorName, string>>;
  /** Doors that answer this refusal in their own words, not the service's reason, and why. */
  verdictOnly?: Partial<Record<DoorName, string>>;
  /** Run while the store is down. */
  outage?: true;
}

/** The links every run makes before the cases, through the REST door. */
const LIVE = 'live01';
/** max_visits 1, visited once. */
const USED_UP = 'used01';
/** retention_days 1, two days ago. */
const EXPIRED = 'gone01';
const TAKEN = 'taken1';
/** The link the outage cases read, edit and delete. */
const KEPT = 'kept01';
/** Code-shaped, and no link's. */
const UNKNOWN = 'nope99';

const nul = (field: string): string => `${field} must not contain a NUL character`;
const surrogate = (field: string): string => `${field} must not contain a lone UTF-16 surrogate (it is not Unicode text)`;
const CODE_ALPHABET = 'code may only use the letters A-Z and a-z, digits, "-" and "_"';
const codeLength = (n: number): string => `code must be ${MIN_CODE} to ${MAX_CODE} characters long, not ${n}`;
const TITLE_TOO_LONG = `title must be at most ${MAX_TITLE} characters long, not ${MAX_TITLE + 1}`;
const TAG_TOO_LONG = `a tag must be 1 to ${MAX_TAG} characters long (after trimming spaces), not ${MAX_TAG + 1}`;
const TOO_MANY_TAGS = `a link may have at most ${MAX_TAGS} distinct tags, not ${MAX_TAGS + 1}`;
const searchLength = (n: number): string => `q must be 1 to ${MAX_SEARCH} characters long, not ${n}`;
const BAD_LIMIT = `limit must be an integer from 1 to ${MAX_LIMIT}`;
const BAD_RETENTION = `retention_days must be an integer from 0 to ${MAX_RETENTION} (0 keeps the link forever)`;
const BAD_MAX_VISITS = `max_visits must be an integer from 1 to ${MAX_VISITS}, or null for no limit`;

/** A character outside the BMP: one character, two UTF-16 units. */
const ASTRAL = '\u{1F600}';
const tags = (n: number, length = 3): string[] => Array.from({ length: n }, (_, i) => `t${String(i).padStart(length - 1, '0')}`);

const ACCEPTED: Expectation = { verdict: 'accepted' };
const NOT_FOUND: Expectation = { verdict: 'not_found' };
const refused = (reason: string): Expectation => ({ verdict: 'refused', reason });

/** Why a door cannot carry a lone surrogate where the case puts one. */
const QUERY_UTF8 = 'a query string carries UTF-8, which has no lone surrogates';
const PATH_UTF8 = 'a path carries UTF-8, which has no lone surrogates';
const PATH_NUL = 'the router refuses a path holding a NUL (400) before any door (docs/api.md, paths)';
const YOURLS_NO_TAGS = "YOURLS' shorturl takes no tags";
const YOURLS_NO_EDIT = "YOURLS' API has no edit";
const YOURLS_NO_DELETE = "YOURLS' API has no delete";
const YOURLS_NO_FILTER = "YOURLS' stats has no search and no tag filter";
const NO_LIMIT_OFFSET = {
  shlink: 'Shlink pages by page and itemsPerPage (any size, -1 for all, as Shlink does), not by limit and offset',
  yourls: "YOURLS' stats reads limit and start as PHP integers and refuses none, as YOURLS does",
};
const YOURLS_NO_LIMITS = "YOURLS' shorturl takes no retention and no visit limit";
const SHLINK_NO_RETENTION = "Shlink's validUntil is a deadline (valid_until), not a count of days";
const YOURLS_URL_WORDS = { yourls: 'YOURLS answers every refused url with its own "Missing or malformed URL" (error:nourl), as YOURLS does' };

const create = (input: CreateInput): Step => ({ operation: 'create', input });
const list = (query: ListQuery): Step => ({ operation: 'list', query });
const edit = (code: string, changes: EditChanges): Step => ({ operation: 'edit', code, changes });

/**
 * The limits of a link's life (docs/api.md): a retention of 0 (forever) to 36500 days, and a visit
 * limit of 1 to 2147483647 or null (none). Each value is one case of a create and one of an edit of
 * the live link, with the same verdict: the limit is the service's, whichever door asks.
 */
interface LifeLimit {
  field: 'retention_days' | 'max_visits';
  value: number | null;
  /** What the value is, in the case's name. */
  label?: string;
  expect: Expectation;
  /** Doors that refuse the value before the service, in their own words. */
  verdictOnly?: Partial<Record<DoorName, string>>;
}

const LIFE_LIMITS: readonly LifeLimit[] = [
  { field: 'retention_days', value: 0, label: 'forever', expect: ACCEPTED },
  { field: 'retention_days', value: MAX_RETENTION, label: 'the limit', expect: ACCEPTED },
  { field: 'retention_days', value: MAX_RETENTION + 1, expect: refused(BAD_RETENTION) },
  { field: 'retention_days', value: -1, expect: refused(BAD_RETENTION) },
  {
    field: 'retention_days',
    value: 1.5,
    label: 'no integer',
    expect: refused(BAD_RETENTION),
    verdictOnly: { mcp: "MCP's inputSchema types retention_days as an integer: the protocol refuses 1.5 before the service (-32602), in its own words" },
  },
  { field: 'max_visits', value: 1, label: 'the minimum', expect: ACCEPTED },
  { field: 'max_visits', value: MAX_VISITS, label: 'the maximum', expect: ACCEPTED },
  { field: 'max_visits', value: 0, expect: refused(BAD_MAX_VISITS) },
  { field: 'max_visits', value: MAX_VISITS + 1, expect: refused(BAD_MAX_VISITS) },
  { field: 'max_visits', value: null, label: 'no limit', expect: ACCEPTED },
];

const lifeLimitName = (l: LifeLimit): string => `${l.field} ${l.value}${l.label === undefined ? '' : ` (${l.label})`}`;

/** What a door cannot say of a limit: Shlink has no retention, YOURLS neither limit (nor an edit). */
const lifeLimitGaps = (l: LifeLimit, yourls: string): Partial<Record<DoorName, string>> =>
  l.field === 'retention_days' ? { shlink: SHLINK_NO_RETENTION, yourls } : { yourls };

const createWithLimit = (l: LifeLimit): Case => ({
  name: `create: ${lifeLimitName(l)}`,
  step: (u) => create({ url: u.url(), [l.field]: l.value }),
  expect: l.expect,
  notOffered: lifeLimitGaps(l, YOURLS_NO_LIMITS),
  ...(l.verdictOnly === undefined ? {} : { verdictOnly: l.verdictOnly }),
});

const editWithLimit = (l: LifeLimit): Case => ({
  name: `edit: ${lifeLimitName(l)}`,
  step: () => edit(LIVE, { [l.field]: l.value }),
  expect: l.expect,
  notOffered: lifeLimitGaps(l, YOURLS_NO_EDIT),
  ...(l.verdictOnly === undefined ? {} : { verdictOnly: l.verdictOnly }),
});

/** Down: writes fail on every store, reads on a database only. */
const whileDown =
  (read: boolean) =>
  (store: StoreUnderTest): Expectation =>
    read && store.readsDuringOutage ? ACCEPTED : { verdict: 'unavailable', reason: store.outageReason };

const YOURLS_NO_ROUTING = "YOURLS' shorturl takes no routing";
const SHLINK_RULES_APART = 'Shlink sets rules through its redirect-rules route, not in a create';
const SHLINK_NO_PASSWORD = 'Shlink has no link passwords';
const iosRule = (url: string) => ({ url, conditions: [{ type: 'device', key: null, value: 'ios' }] });
const LATER = 1_900_000_000;

/** Where a link sends each visitor (docs/api.md): the service's rules, whichever door sets them. */
const ROUTING_CASES: readonly Case[] = [
  {
    name: 'create: rules, forward_query, validity and a password',
    step: (u) =>
      create({
        url: u.url(),
        rules: [iosRule(u.url(40, 'ios'))],
        forward_query: true,
        valid_since: 1_700_000_000,
        valid_until: LATER,
        password: 'a long password',
      }),
    expect: ACCEPTED,
    notOffered: { shlink: SHLINK_RULES_APART, yourls: YOURLS_NO_ROUTING },
  },
  {
    name: 'create: forward_query and a validity window',
    step: (u) => create({ url: u.url(), forward_query: true, valid_since: 1_700_000_000, valid_until: LATER }),
    expect: ACCEPTED,
    notOffered: { yourls: YOURLS_NO_ROUTING },
  },
  {
    name: 'create: valid_since not before valid_until',
    step: (u) => create({ url: u.url(), valid_since: LATER, valid_until: LATER }),
    expect: refused('valid_since must be before valid_until: the link would never be valid'),
    notOffered: { yourls: YOURLS_NO_ROUTING },
  },
  {
    name: 'create: a rule whose url is not http(s)',
    step: (u) => create({ url: u.url(), rules: [iosRule('ftp://example.com/x')] }),
    expect: refused('rules[0].url: url must use http or https, not ftp'),
    notOffered: { shlink: SHLINK_RULES_APART, yourls: YOURLS_NO_ROUTING },
  },
  {
    name: 'create: a password of 7 characters',
    step: (u) => create({ url: u.url(), password: 'seven77' }),
    expect: refused('password must be 8 to 128 characters long'),
    notOffered: { shlink: SHLINK_NO_PASSWORD, yourls: YOURLS_NO_ROUTING },
  },
];

export const CASES: readonly Case[] = [
  ...ROUTING_CASES,
  // Creates: the URL.
  { name: 'create: a plain URL', step: (u) => create({ url: u.url() }), expect: ACCEPTED },
  { name: 'create: a url holding a NUL', step: (u) => create({ url: `${u.url()}\0x` }), expect: refused(nul('url')), verdictOnly: YOURLS_URL_WORDS },
  {
    name: 'create: a url holding a lone surrogate',
    step: (u) => create({ url: `${u.url()}\uD800` }),
    expect: refused(surrogate('url')),
    notOffered: { yourls: QUERY_UTF8 },
  },
  { name: `create: a url of ${MAX_URL} characters (the limit)`, step: (u) => create({ url: u.url(MAX_URL) }), expect: ACCEPTED },
  {
    name: `create: a url of ${MAX_URL + 1} characters`,
    step: (u) => create({ url: u.url(MAX_URL + 1) }),
    expect: refused(`url is too long: ${MAX_URL + 1} characters, the limit is ${MAX_URL}`),
    verdictOnly: YOURLS_URL_WORDS,
  },
  {
    name: 'create: a url that is not absolute',
    step: (u) => create({ url: u.url().replace('https://', '') }),
    expect: refused('url must be an absolute URL such as https://example.com/page'),
    verdictOnly: YOURLS_URL_WORDS,
  },
  // Creates: the custom code.
  { name: 'create: a code holding a NUL', step: (u) => create({ url: u.url(), code: `${u.code(3)}\0x` }), expect: refused(CODE_ALPHABET) },
  {
    name: 'create: a code holding a lone surrogate',
    step: (u) => create({ url: u.url(), code: `${u.code(4)}\uDC00x` }),
    expect: refused(CODE_ALPHABET),
    notOffered: { yourls: QUERY_UTF8 },
  },
  { name: `create: a code of ${MIN_CODE} characters (the minimum)`, step: (u) => create({ url: u.url(), code: u.code(MIN_CODE) }), expect: ACCEPTED },
  {
    name: `create: a code of ${MIN_CODE - 1} characters`,
    step: (u) => create({ url: u.url(), code: u.code(MIN_CODE - 1) }),
    expect: refused(codeLength(MIN_CODE - 1)),
  },
  { name: `create: a code of ${MAX_CODE} characters (the maximum)`, step: (u) => create({ url: u.url(), code: u.code(MAX_CODE) }), expect: ACCEPTED },
  {
    name: `create: a code of ${MAX_CODE + 1} characters`,
    step: (u) => create({ url: u.url(), code: u.code(MAX_CODE + 1) }),
    expect: refused(codeLength(MAX_CODE + 1)),
  },
  { name: 'create: a custom code a live link holds', step: (u) => create({ url: u.url(), code: TAKEN }), expect: { verdict: 'conflict' } },
  // Creates: the title.
  { name: 'create: a title holding a NUL', step: (u) => create({ url: u.url(), title: 'a\0b' }), expect: refused(nul('title')) },
  {
    name: 'create: a title holding a lone surrogate',
    step: (u) => create({ url: u.url(), title: 'a\uD800b' }),
    expect: refused(surrogate('title')),
    notOffered: { yourls: QUERY_UTF8 },
  },
  { name: `create: a title of ${MAX_TITLE} characters (the limit)`, step: (u) => create({ url: u.url(), title: 'x'.repeat(MAX_TITLE) }), expect: ACCEPTED },
  {
    name: `create: a title of ${MAX_TITLE} characters outside the BMP (${MAX_TITLE * 2} UTF-16 units)`,
    step: (u) => create({ url: u.url(), title: ASTRAL.repeat(MAX_TITLE) }),
    expect: ACCEPTED,
  },
  {
    name: `create: a title of ${MAX_TITLE + 1} characters`,
    step: (u) => create({ url: u.url(), title: 'x'.repeat(MAX_TITLE + 1) }),
    expect: refused(TITLE_TOO_LONG),
  },
  // Creates: the tags.
  {
    name: 'create: a tag holding a NUL',
    step: (u) => create({ url: u.url(), tags: ['a\0b'] }),
    expect: refused(nul('a tag')),
    notOffered: { yourls: YOURLS_NO_TAGS },
  },
  {
    name: 'create: a tag holding a lone surrogate',
    step: (u) => create({ url: u.url(), tags: ['a\uD800'] }),
    expect: refused(surrogate('a tag')),
    notOffered: { yourls: YOURLS_NO_TAGS },
  },
  {
    name: `create: a tag of ${MAX_TAG} characters (the limit)`,
    step: (u) => create({ url: u.url(), tags: ['x'.repeat(MAX_TAG)] }),
    expect: ACCEPTED,
    notOffered: { yourls: YOURLS_NO_TAGS },
  },
  {
    name: `create: a tag of ${MAX_TAG + 1} characters`,
    step: (u) => create({ url: u.url(), tags: ['x'.repeat(MAX_TAG + 1)] }),
    expect: refused(TAG_TOO_LONG),
    notOffered: { yourls: YOURLS_NO_TAGS },
  },
  {
    name: `create: ${MAX_TAGS} tags (the limit)`,
    step: (u) => create({ url: u.url(), tags: tags(MAX_TAGS) }),
    expect: ACCEPTED,
    notOffered: { yourls: YOURLS_NO_TAGS },
  },
  {
    name: `create: ${MAX_TAGS + 1} tags`,
    step: (u) => create({ url: u.url(), tags: tags(MAX_TAGS + 1) }),
    expect: refused(TOO_MANY_TAGS),
    notOffered: { yourls: YOURLS_NO_TAGS },
  },
  // Creates: the retention and the visit limit.
  ...LIFE_LIMITS.map(createWithLimit),
  // Creates: the create limit (1 a minute per client address).
  {
    name: 'create: past create_rate_limit',
    first: (u) => create({ url: u.url(undefined, 'first') }),
    step: (u) => create({ url: u.url() }),
    expect: { verdict: 'rate_limited', reason: 'too many links created from this address: try again in 60 seconds' },
    verdictOnly: { yourls: 'YOURLS answers a flood in its own words, "Too many URLs added too fast. Slow down please." (error:flood)' },
  },
  // Reads of one link.
  { name: 'get: a live link', step: () => ({ operation: 'get', code: LIVE }), expect: ACCEPTED },
  { name: 'get: an unknown code', step: () => ({ operation: 'get', code: UNKNOWN }), expect: NOT_FOUND },
  { name: 'get: an expired link', step: () => ({ operation: 'get', code: EXPIRED }), expect: NOT_FOUND },
  { name: 'get: a link whose visit limit is used up (it stays visible)', step: () => ({ operation: 'get', code: USED_UP }), expect: ACCEPTED },
  {
    name: 'get: a code holding a NUL',
    step: () => ({ operation: 'get', code: 'live\u000001' }),
    expect: NOT_FOUND,
    notOffered: { rest: PATH_NUL, shlink: PATH_NUL },
  },
  {
    name: 'get: a code holding a lone surrogate',
    step: () => ({ operation: 'get', code: 'live\uD80001' }),
    expect: NOT_FOUND,
    notOffered: { rest: PATH_UTF8, shlink: PATH_UTF8, yourls: QUERY_UTF8 },
  },
  { name: 'get: a code longer than any code (65 characters)', step: () => ({ operation: 'get', code: 'a'.repeat(65) }), expect: NOT_FOUND },
  // Edits.
  {
    name: 'edit: the title of a live link',
    step: () => edit(LIVE, { title: 'edited' }),
    expect: ACCEPTED,
    notOffered: { yourls: YOURLS_NO_EDIT },
  },
  { name: 'edit: an unknown code', step: () => edit(UNKNOWN, { title: 'edited' }), expect: NOT_FOUND, notOffered: { yourls: YOURLS_NO_EDIT } },
  { name: 'edit: an expired link', step: () => edit(EXPIRED, { title: 'edited' }), expect: NOT_FOUND, notOffered: { yourls: YOURLS_NO_EDIT } },
  {
    name: 'edit: a link whose visit limit is used up',
    step: () => edit(USED_UP, { title: 'edited' }),
    expect: ACCEPTED,
    notOffered: { yourls: YOURLS_NO_EDIT },
  },
  {
    name: 'edit: a url holding a NUL',
    step: (u) => edit(LIVE, { url: `${u.url()}\0x` }),
    expect: refused(nul('url')),
    notOffered: { yourls: YOURLS_NO_EDIT },
  },
  {
    name: 'edit: a url holding a lone surrogate',
    step: (u) => edit(LIVE, { url: `${u.url()}\uDFFF` }),
    expect: refused(surrogate('url')),
    notOffered: { yourls: YOURLS_NO_EDIT },
  },
  {
    name: `edit: a url of ${MAX_URL + 1} characters`,
    step: (u) => edit(LIVE, { url: u.url(MAX_URL + 1) }),
    expect: refused(`url is too long: ${MAX_URL + 1} characters, the limit is ${MAX_URL}`),
    notOffered: { yourls: YOURLS_NO_EDIT },
  },
  {
    name: `edit: a url of ${MAX_URL} characters (the limit)`,
    step: (u) => edit(LIVE, { url: u.url(MAX_URL) }),
    expect: ACCEPTED,
    notOffered: { yourls: YOURLS_NO_EDIT },
  },
  {
    name: `edit: a title of ${MAX_TITLE} characters outside the BMP (the limit)`,
    step: () => edit(LIVE, { title: ASTRAL.repeat(MAX_TITLE) }),
    expect: ACCEPTED,
    notOffered: { yourls: YOURLS_NO_EDIT },
  },
  { name: `edit: ${MAX_TAGS} tags (the limit)`, step: () => edit(LIVE, { tags: tags(MAX_TAGS) }), expect: ACCEPTED, notOffered: { yourls: YOURLS_NO_EDIT } },
  { name: 'edit: a title holding a NUL', step: () => edit(LIVE, { title: '\0' }), expect: refused(nul('title')), notOffered: { yourls: YOURLS_NO_EDIT } },
  {
    name: `edit: a title of ${MAX_TITLE + 1} characters`,
    step: () => edit(LIVE, { title: 'y'.repeat(MAX_TITLE + 1) }),
    expect: refused(TITLE_TOO_LONG),
    notOffered: { yourls: YOURLS_NO_EDIT },
  },
  { name: 'edit: a tag holding a NUL', step: () => edit(LIVE, { tags: ['\0'] }), expect: refused(nul('a tag')), notOffered: { yourls: YOURLS_NO_EDIT } },
  {
    name: 'edit: a tag holding a lone surrogate',
    step: () => edit(LIVE, { tags: ['\uDC00'] }),
    expect: refused(surrogate('a tag')),
    notOffered: { yourls: YOURLS_NO_EDIT },
  },
  {
    name: `edit: a tag of ${MAX_TAG + 1} characters`,
    step: () => edit(LIVE, { tags: ['z'.repeat(MAX_TAG + 1)] }),
    expect: refused(TAG_TOO_LONG),
    notOffered: { yourls: YOURLS_NO_EDIT },
  },
  {
    name: `edit: ${MAX_TAGS + 1} tags`,
    step: () => edit(LIVE, { tags: tags(MAX_TAGS + 1) }),
    expect: refused(TOO_MANY_TAGS),
    notOffered: { yourls: YOURLS_NO_EDIT },
  },
  // Edits: the retention and the visit limit.
  ...LIFE_LIMITS.map(editWithLimit),
  // Deletes.
  {
    name: 'delete: a live link',
    step: async (u) => ({ operation: 'delete', code: await u.fresh() }),
    expect: ACCEPTED,
    notOffered: { yourls: YOURLS_NO_DELETE },
  },
  { name: 'delete: an unknown code', step: () => ({ operation: 'delete', code: UNKNOWN }), expect: NOT_FOUND, notOffered: { yourls: YOURLS_NO_DELETE } },
  { name: 'delete: an expired link', step: () => ({ operation: 'delete', code: EXPIRED }), expect: NOT_FOUND, notOffered: { yourls: YOURLS_NO_DELETE } },
  // Lists and searches.
  { name: 'list: every live link', step: () => list({}), expect: ACCEPTED },
  { name: 'list: q holding a NUL', step: () => list({ q: 'a\0b' }), expect: refused(nul('q')), notOffered: { yourls: YOURLS_NO_FILTER } },
  {
    name: 'list: q holding a lone surrogate',
    step: () => list({ q: 'a\uD800' }),
    expect: refused(surrogate('q')),
    notOffered: { rest: QUERY_UTF8, shlink: QUERY_UTF8, yourls: YOURLS_NO_FILTER },
  },
  { name: 'list: q of 1 character (the minimum)', step: () => list({ q: 'e' }), expect: ACCEPTED, notOffered: { yourls: YOURLS_NO_FILTER } },
  {
    name: 'list: an empty q',
    step: () => list({ q: '' }),
    expect: refused(searchLength(0)),
    notOffered: { shlink: 'Shlink reads an empty searchTerm as no search, as Shlink does', yourls: YOURLS_NO_FILTER },
  },
  {
    name: `list: q of ${MAX_SEARCH} characters (the limit)`,
    step: () => list({ q: 'q'.repeat(MAX_SEARCH) }),
    expect: ACCEPTED,
    notOffered: { yourls: YOURLS_NO_FILTER },
  },
  {
    name: `list: q of ${MAX_SEARCH} characters outside the BMP (${MAX_SEARCH * 2} UTF-16 units)`,
    step: () => list({ q: ASTRAL.repeat(MAX_SEARCH) }),
    expect: ACCEPTED,
    notOffered: { yourls: YOURLS_NO_FILTER },
  },
  {
    name: `list: q of ${MAX_SEARCH + 1} characters`,
    step: () => list({ q: 'q'.repeat(MAX_SEARCH + 1) }),
    expect: refused(searchLength(MAX_SEARCH + 1)),
    notOffered: { yourls: YOURLS_NO_FILTER },
  },
  { name: 'list: a tag filter holding a NUL', step: () => list({ tags: ['a\0b'] }), expect: refused(nul('a tag')), notOffered: { yourls: YOURLS_NO_FILTER } },
  {
    name: 'list: a tag filter holding a lone surrogate',
    step: () => list({ tags: ['a\uDBFF'] }),
    expect: refused(surrogate('a tag')),
    notOffered: { rest: QUERY_UTF8, shlink: QUERY_UTF8, yourls: YOURLS_NO_FILTER },
  },
  {
    name: `list: a tag filter of ${MAX_TAG} characters (the limit)`,
    step: () => list({ tags: ['x'.repeat(MAX_TAG)] }),
    expect: ACCEPTED,
    notOffered: { yourls: YOURLS_NO_FILTER },
  },
  {
    name: `list: a tag filter of ${MAX_TAG + 1} characters`,
    step: () => list({ tags: ['x'.repeat(MAX_TAG + 1)] }),
    expect: refused(TAG_TOO_LONG),
    notOffered: { yourls: YOURLS_NO_FILTER },
  },
  {
    name: `list: a filter of ${MAX_TAGS} tags (the limit)`,
    step: () => list({ tags: tags(MAX_TAGS) }),
    expect: ACCEPTED,
    notOffered: { yourls: YOURLS_NO_FILTER },
  },
  {
    name: `list: a filter of ${MAX_TAGS + 1} tags`,
    step: () => list({ tags: tags(MAX_TAGS + 1) }),
    expect: refused(TOO_MANY_TAGS),
    notOffered: { yourls: YOURLS_NO_FILTER },
  },
  { name: `list: limit ${MAX_LIMIT} (the maximum)`, step: () => list({ limit: MAX_LIMIT }), expect: ACCEPTED, notOffered: NO_LIMIT_OFFSET },
  { name: `list: limit ${MAX_LIMIT + 1}`, step: () => list({ limit: MAX_LIMIT + 1 }), expect: refused(BAD_LIMIT), notOffered: NO_LIMIT_OFFSET },
  { name: 'list: limit 1 (the minimum)', step: () => list({ limit: 1 }), expect: ACCEPTED, notOffered: NO_LIMIT_OFFSET },
  { name: 'list: limit 0', step: () => list({ limit: 0 }), expect: refused(BAD_LIMIT), notOffered: NO_LIMIT_OFFSET },
  { name: 'list: offset 0 (the minimum)', step: () => list({ limit: 10, offset: 0 }), expect: ACCEPTED, notOffered: NO_LIMIT_OFFSET },
  {
    name: 'list: offset -1',
    step: () => list({ limit: 10, offset: -1 }),
    expect: refused('offset must be an integer of 0 or more'),
    notOffered: NO_LIMIT_OFFSET,
  },
  // The store down.
  { name: 'store down: create', step: (u) => create({ url: u.url() }), expect: whileDown(false), outage: true },
  { name: 'store down: get', step: () => ({ operation: 'get', code: KEPT }), expect: whileDown(true), outage: true },
  { name: 'store down: list', step: () => list({}), expect: whileDown(true), outage: true },
  { name: 'store down: edit', step: () => edit(KEPT, { title: 'edited' }), expect: whileDown(false), notOffered: { yourls: YOURLS_NO_EDIT }, outage: true },
  {
    name: 'store down: delete',
    step: () => ({ operation: 'delete', code: KEPT }),
    expect: whileDown(false),
    notOffered: { yourls: YOURLS_NO_DELETE },
    outage: true,
  },
];

// ---- The runner -------------------------------------------------------------------------------

/** The letter of a door in the codes and addresses its requests use. */
const LETTER: Readonly<Record<DoorName, string>> = { rest: 'r', mcp: 'm', shlink: 's', yourls: 'y' };

function uniqueFor(index: number, door: DoorName, port: number, fixtures: Fixtures): Unique {
  const tag = `${LETTER[door]}${index.toString(36).padStart(2, '0')}`;
  return {
    url(length, variant = '') {
      const base = `https://example.com/c${tag}${variant}/`;
      return length === undefined ? base : base + 'a'.repeat(length - base.length);
    },
    code: (length) => (tag + 'x'.repeat(MAX_CODE + 1)).slice(0, length),
    fresh: () => fixtures.make(port, `f${tag}xx`, {}),
  };
}

/** The client address of one case at one door: its creates are counted apart from every other's. */
function addressOf(index: number, door: DoorName): string {
  const n = index * DOORS.length + DOORS.indexOf(door);
  return `10.1.${Math.floor(n / 250)}.${(n % 250) + 1}`;
}

/** The links made before the cases, through the REST door, each from a client of its own. */
interface Fixtures {
  make(port: number, code: string, extra: Record<string, unknown>): Promise<string>;
}

function fixtureMaker(): Fixtures {
  let made = 0;
  return {
    async make(port, code, extra) {
      made++;
      const r = await request(port, '/api/shorten', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.9.${Math.floor(made / 250)}.${(made % 250) + 1}` },
        body: JSON.stringify({ url: `https://example.com/fixture/${code}`, code, ...extra }),
      });
      assert.equal(r.status, 201, `fixture ${code}: ${r.body}`);
      return code;
    },
  };
}

async function stepThrough(door: DoorName, step: Step, caller: Caller): Promise<Outcome> {
  const adapter = ADAPTERS[door];
  switch (step.operation) {
    case 'create':
      return adapter.create(step.input, caller);
    case 'get':
      return adapter.get(step.code, caller);
    case 'edit':
      return adapter.edit(step.code, step.changes, caller);
    case 'delete':
      return adapter.delete(step.code, caller);
    case 'list':
      return adapter.list(step.query, caller);
  }
}

const said = (verdict: string, reason: string | undefined): string => (reason === undefined ? verdict : `${verdict} (${JSON.stringify(reason)})`);

/** One case at one door: the door's verdict, and its reason unless the table says the door carries none. */
async function runAt(t: TestContext, c: Case, index: number, door: DoorName, store: StoreUnderTest, port: number, fixtures: Fixtures): Promise<void> {
  const u = uniqueFor(index, door, port, fixtures);
  const caller: Caller = { port, key: KEY, address: addressOf(index, door) };
  const gap = c.notOffered?.[door];
  if (c.first !== undefined && gap === undefined) {
    const first = await stepThrough(door, c.first(u), caller);
    assert.equal(first.verdict, 'accepted', `the first request: ${first.raw}`);
  }
  const got = await stepThrough(door, await c.step(u), caller);
  // What the door said, beside the test: the table's answers can be read whether they pass or not.
  t.diagnostic(`${said(got.verdict, got.reason)}: ${got.raw}`);
  if (gap !== undefined) {
    assert.equal(got.verdict, 'not_offered', `the table says ${door} cannot express this (${gap}); it answered ${said(got.verdict, got.reason)}: ${got.raw}`);
    return;
  }
  const expected = typeof c.expect === 'function' ? c.expect(store) : c.expect;
  const observed = `observed ${said(got.verdict, got.reason)}, expected ${said(expected.verdict, expected.reason)}: ${got.raw}`;
  assert.equal(got.verdict, expected.verdict, observed);
  if (expected.reason === undefined) return;
  if (c.verdictOnly?.[door] !== undefined) {
    assert.equal(got.reason, undefined, `the table says ${door} answers in its own words; it now carries a reason, so drop the note: ${got.raw}`);
    return;
  }
  assert.equal(got.reason, expected.reason, observed);
}

/** The links the cases read and edit, and the clock moved past the expired one's retention. */
async function makeFixtures(port: number, fixtures: Fixtures, clock: { ms: number }): Promise<void> {
  await fixtures.make(port, LIVE, {});
  await fixtures.make(port, TAKEN, {});
  await fixtures.make(port, KEPT, {});
  await fixtures.make(port, USED_UP, { max_visits: 1 });
  assert.equal((await request(port, `/${USED_UP}`)).status, 302);
  assert.equal((await request(port, `/${USED_UP}`)).status, 410, 'the visit limit is used up');
  await fixtures.make(port, EXPIRED, { retention_days: 1 });
  clock.ms += 2 * DAY_MS;
  assert.equal((await request(port, `/${EXPIRED}`)).status, 410, 'the link has expired');
}

/**
 * Registers the suite on `store`: one server for the file, the fixtures, then one test per case
 * with a subtest per door, and last the cases of the store down.
 */
export function runDoorConformance(store: StoreUnderTest): void {
  const clock = { ms: T0 };
  const fixtures = fixtureMaker();
  let served: ServedStore | undefined;
  const skip = store.skip === undefined ? {} : { skip: store.skip };

  if (store.skip === undefined) {
    before(async () => {
      served = await store.open(doorSettings(() => clock.ms));
      await makeFixtures(served.port, fixtures, clock);
    });
    after(() => served?.close());
  }

  test('the table: every case named once, every note naming a door, every verdict met', (t) => {
    assert.equal(new Set(CASES.map((c) => c.name)).size, CASES.length);
    for (const c of CASES) {
      for (const door of [...Object.keys(c.notOffered ?? {}), ...Object.keys(c.verdictOnly ?? {})]) {
        assert.ok((DOORS as readonly string[]).includes(door), `${c.name}: ${door}`);
      }
    }
    const verdicts = new Set(CASES.map((c) => (typeof c.expect === 'function' ? c.expect(store) : c.expect).verdict));
    assert.deepEqual([...verdicts].sort(), ['accepted', 'conflict', 'not_found', 'rate_limited', 'refused', 'unavailable']);
    const gaps = CASES.reduce((n, c) => n + Object.keys(c.notOffered ?? {}).length, 0);
    const textless = CASES.reduce((n, c) => n + Object.keys(c.verdictOnly ?? {}).length, 0);
    t.diagnostic(
      `${CASES.length} cases × ${DOORS.length} doors = ${CASES.length * DOORS.length}: ${gaps} not offered, ${textless} compared by verdict alone, ${CASES.length * DOORS.length - gaps} run`,
    );
  });

  const register = (c: Case, index: number): void => {
    test(`${store.name} · ${c.name}`, skip, async (t) => {
      for (const door of DOORS) await t.test(door, (td) => runAt(td, c, index, door, store, served!.port, fixtures));
    });
  };

  CASES.forEach((c, index) => {
    if (!c.outage) register(c, index);
  });

  test(`${store.name} · the store down`, skip, async (t) => {
    await served!.down();
    try {
      for (const [index, c] of CASES.entries()) {
        if (!c.outage) continue;
        await t.test(c.name, async (tc) => {
          for (const door of DOORS) await tc.test(door, (td) => runAt(td, c, index, door, store, served!.port, fixtures));
        });
      }
    } finally {
      await served!.up();
    }
  });
}
