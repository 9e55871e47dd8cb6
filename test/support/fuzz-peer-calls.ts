/**
 * fast-check arbitraries for calls of the peers' surfaces (docs/compat.md), for fuzz-arbitraries.ts:
 * Shlink's `/rest/…` and YOURLS' `/yourls-api.php`, with their own credentials (`X-Api-Key: k1`,
 * `signature=k1`) or without, and parameters that are often what a store cannot hold (a NUL), what
 * an XML document cannot hold (U+FFFE, U+FFFF), or a name every object inherits (`__proto__`).
 * Free composition reaches these handlers too rarely to try their input handling.
 */
import fc from 'fast-check';
import { anyChar } from './any-char.ts';

/** Replaced by a live short code when a case is rendered (fuzz-arbitraries.ts's `CODE`). */
const CODE = '{code}';

/** Text a parameter may hold: the hard cases often, a live code now and then, anything rarely. */
const text: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('a\u0000b', '\u0000', 'news\u0000') },
  { weight: 2, arbitrary: fc.constantFrom('\ufffe', 'x\uffff', '\u0001', '__proto__', 'constructor', 'valueOf', 'news', 'fuzz', '') },
  { weight: 2, arbitrary: fc.constantFrom(CODE, 'https://example.com/peer', 'https://example.com/\u0000', 'https://example.com/\ufffe') },
  { weight: 1, arbitrary: fc.string({ unit: anyChar, maxLength: 12 }) },
);

/** `name=value` with the value percent-encoded, but `{code}` left for the run to replace. */
const pair = (name: string, value: string): string => `${name}=${value.split(CODE).map(encodeURIComponent).join(CODE)}`;

// ---- Shlink ----------------------------------------------------------------------------------

/** Shlink's routes with the methods they serve; the lists, which take the most parameters, most often. */
const SHLINK_ROUTES: readonly (readonly [method: string, path: string])[] = [
  ['GET', '/rest/v3/short-urls'],
  ['GET', '/rest/v3/short-urls'],
  ['GET', '/rest/v3/short-urls'],
  ['GET', '/rest/v3/short-urls'],
  ['POST', '/rest/v3/short-urls'],
  ['POST', '/rest/v3/short-urls'],
  ['GET', '/rest/v3/tags/stats'],
  ['GET', '/rest/v3/tags/stats'],
  ['GET', '/rest/v3/tags/stats'],
  ['GET', '/rest/v3/tags/stats'],
  ['GET', '/rest/v3/tags'],
  ['GET', `/rest/v3/short-urls/${CODE}`],
  ['PATCH', `/rest/v3/short-urls/${CODE}`],
  ['DELETE', `/rest/v3/short-urls/${CODE}`],
  ['GET', `/rest/v3/short-urls/${CODE}/visits`],
  ['DELETE', `/rest/v3/short-urls/${CODE}/visits`],
  ['GET', `/rest/v3/short-urls/${CODE}/redirect-rules`],
  ['POST', `/rest/v3/short-urls/${CODE}/redirect-rules`],
  ['GET', '/rest/v3/short-urls/nope42'],
  ['GET', '/rest/v3/visits'],
  ['GET', '/rest/health'],
  ['GET', '/rest/v3/health'],
  ['GET', '/rest/v3/domains'],
  ['GET', '/rest/v3/mercure-info'],
  ['GET', '/rest/v3/nope'],
  ['GET', '/rest/v2/short-urls'],
  ['GET', '/rest'],
];

const ODD_METHODS = ['HEAD', 'PUT', 'OPTIONS', 'PATCH', 'DELETE', 'POST'];

/** An `orderBy` field: one of the lists', a name every object inherits, or none. */
const orderField = fc.oneof(
  fc.constantFrom('dateCreated', 'shortCode', 'longUrl', 'title', 'visits', 'nonBotVisits', 'tag', 'shortUrlsCount', ''),
  fc.constantFrom('__proto__', 'constructor', 'valueOf', 'hasOwnProperty', 'toString'),
);
const orderDir = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('-ASC', '-DESC') }, { weight: 1, arbitrary: fc.constantFrom('', '-asc', '-X', '-ASC-DESC') });

const shlinkParam: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(orderField, orderDir).map(([field, dir]) => pair('orderBy', field + dir)) },
  {
    weight: 3,
    arbitrary: fc.tuple(fc.constantFrom('searchTerm', 'tags[]', 'tags%5B%5D', 'tags', 'excludeTags[]'), text).map(([name, value]) => pair(name, value)),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'page=2',
      'page=0',
      'page=-1',
      'page=x',
      'itemsPerPage=-1',
      'itemsPerPage=1',
      'itemsPerPage=99999999999999999',
      'tagsMode=all',
      'tagsMode=x',
      'excludeTagsMode=all',
      'startDate=2026-01-01',
      'endDate=2026-01-01T10:00:00%2B02:00',
      'startDate=x',
      'endDate=1e9',
      'excludeBots',
      'excludeMaxVisitsReached=true',
      'domain=DEFAULT',
      'domain=evil.example',
      'searchTerm=%ED%A0%80',
      'searchTerm=%EF%BF%BE',
    ),
  },
);

const shlinkQuery: fc.Arbitrary<string> = fc.array(shlinkParam, { maxLength: 4 }).map((parts) => (parts.length === 0 ? '' : `?${parts.join('&')}`));

/** A value of a create or edit body: the documented kinds, the hard texts, or any JSON. */
const jsonValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: text },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(
      null,
      true,
      3,
      -1,
      0,
      1e308,
      '2030-01-01T00:00:00+00:00',
      '1970-01-01',
      ['news', 'a\u0000b'],
      ['\ufffe'],
      ['x', 'x'],
      [],
    ),
  },
  { weight: 1, arbitrary: fc.jsonValue() },
);

const SHLINK_FIELDS = [
  'longUrl',
  'customSlug',
  'title',
  'tags',
  'maxVisits',
  'validUntil',
  'validSince',
  'findIfExists',
  'shortCodeLength',
  'domain',
  'crawlable',
  'redirectRules',
  '__proto__',
];

/** A JSON body of a create or an edit: a few of Shlink's fields (`__proto__` an own one), the long URL mostly valid. */
const shlinkBody: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom('https://example.com/peer', 'https://example.com/\ufffe', 'javascript:x', ''),
    fc.array(fc.tuple(fc.constantFrom(...SHLINK_FIELDS), jsonValue), { maxLength: 4 }),
  )
  .map(([longUrl, fields]) => {
    const body: Record<string, unknown> = { longUrl };
    for (const [name, value] of fields) Object.defineProperty(body, name, { value, enumerable: true, writable: true, configurable: true });
    return JSON.stringify(body);
  });

/** The parts of a request to Shlink's surface: method, target, extra headers, body. */
export const shlinkCall = fc
  .record({
    route: fc.tuple(
      fc.constantFrom(...SHLINK_ROUTES),
      fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...ODD_METHODS) }),
    ),
    query: shlinkQuery,
    key: fc.constantFrom<readonly [string, string][]>([['X-API-Key', 'k1']], [['X-API-Key', 'k1']], [['X-API-Key', 'k1']], [['X-API-Key', 'wrong']], []),
    body: fc.oneof({ weight: 3, arbitrary: shlinkBody }, { weight: 1, arbitrary: fc.constantFrom('', '{', '[]', '"x"', '{"longUrl":') }),
  })
  .map(({ route: [[method, path], odd], query, key, body }) => ({ method: odd ?? method, target: path + query, key, body }));

// ---- YOURLS ----------------------------------------------------------------------------------

const ACTIONS = ['shorturl', 'shorturl', 'expand', 'url-stats', 'stats', 'stats', 'db-stats', 'version', '__proto__', 'constructor', 'hasOwnProperty', ''];

const yourlsParam: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'format=xml',
      'format=xml',
      'format=json',
      'format=jsonp',
      'format=simple',
      'format=__proto__',
      'callback=cb',
      'callback=a(',
      'jsonp=x.y',
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'filter=top',
      'filter=rand',
      'filter=last',
      'filter=__proto__',
      'limit=5',
      'limit=-1',
      'start=1',
      'db=1',
      'hash=sha1',
      'hash=__proto__',
      'timestamp=1',
    ),
  },
  { weight: 4, arbitrary: fc.tuple(fc.constantFrom('url', 'keyword', 'title', 'shorturl'), text).map(([name, value]) => pair(name, value)) },
);

/** The parameters of a YOURLS call: an action and `signature=k1` mostly, and a few others. */
const yourlsParams: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(...ACTIONS),
    fc.constantFrom('signature=k1', 'signature=k1', 'signature=k1', 'signature=wrong', ''),
    fc.array(yourlsParam, { maxLength: 4 }),
  )
  .map(([action, signature, rest]) => [pair('action', action), signature, ...rest].filter((p) => p !== '').join('&'));

/** The parts of a request to YOURLS' API: its parameters in the query, or in a POST form. */
export const yourlsCall = fc.record({
  method: fc.oneof({ weight: 8, arbitrary: fc.constantFrom('GET', 'POST') }, { weight: 1, arbitrary: fc.constantFrom('HEAD', 'PUT') }),
  params: yourlsParams,
  inBody: fc.boolean(),
});
