/**
 * The four doors onto the links, each as an adapter for the door conformance suite
 * (`door-conformance.ts`): REST (`/api/…`), MCP (`/mcp`, JSON-RPC tool calls), Shlink's REST v3
 * (`/rest/v3/…`) and YOURLS' API (`/yourls-api.php`). An adapter speaks its door's wire format over
 * a real socket, judges the answer by the door's own shapes (REST's status and `{"detail"}`, MCP's
 * `isError` and text, Shlink's problem details, YOURLS' JSON with `statusCode`/`errorCode`) and
 * returns one verdict the four can share, with the reason in the service's words where the door
 * carries it. An answer in the wrong shape for its door is the verdict `unexpected`, whatever its
 * status.
 *
 * What a door cannot express (an operation it lacks, a lone surrogate in a query string, a NUL in a
 * path) is the verdict `not_offered`: the case names those doors in a note of the table, so a gap
 * is written down, never a case silently left out. Adding a door is adding its adapter here and its name to
 * `DOORS`.
 */
import { request, type Reply } from './helpers.ts';

export const DOORS = ['rest', 'mcp', 'shlink', 'yourls'] as const;
export type DoorName = (typeof DOORS)[number];

/** What every door is judged by. */
export type Verdict = 'accepted' | 'refused' | 'not_found' | 'unavailable' | 'conflict' | 'rate_limited';

export interface Outcome {
  verdict: Verdict | 'not_offered' | 'unexpected';
  /** The reason in the service's words (the door's own field names mapped back); absent when the door carries none. */
  reason?: string;
  /** What the door answered, for the failure message. */
  raw: string;
}

/**
 * A create, in the service's terms (docs/api.md, creating links). The limits keep the API's names,
 * and take any number: a case may ask for one past the limit, or for no integer.
 */
export interface CreateInput {
  url: string;
  code?: string;
  title?: string;
  tags?: readonly string[];
  retention_days?: number;
  /** null: no limit. */
  max_visits?: number | null;
  /** Where the link sends each visitor (docs/api.md): the record's names, instants in Unix seconds. */
  rules?: readonly unknown[];
  forward_query?: boolean;
  valid_since?: number;
  valid_until?: number;
  password?: string;
}

/** The fields an edit changes. */
export interface EditChanges {
  url?: string;
  title?: string;
  tags?: readonly string[];
  retention_days?: number;
  /** null: the limit removed. */
  max_visits?: number | null;
}

/** A list's query (docs/api.md, list): a search, a tag filter (every tag named), a page. */
export interface ListQuery {
  q?: string;
  tags?: readonly string[];
  limit?: number;
  offset?: number;
}

/** Who calls, and where: the port, the admin key, and the client address a create is counted against. */
export interface Caller {
  port: number;
  key: string;
  /** Sent as `X-Forwarded-For` (the server trusts one proxy): each case and door creates as a client of its own. */
  address: string;
}

export interface Door {
  name: DoorName;
  create(input: CreateInput, caller: Caller): Promise<Outcome>;
  get(code: string, caller: Caller): Promise<Outcome>;
  edit(code: string, changes: EditChanges, caller: Caller): Promise<Outcome>;
  delete(code: string, caller: Caller): Promise<Outcome>;
  list(query: ListQuery, caller: Caller): Promise<Outcome>;
}

// ---- Shared pieces ----------------------------------------------------------------------------

/** A UTF-16 surrogate without its pair (the `u` flag matches a surrogate only when it is alone). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

const notOffered = (why: string): Outcome => ({ verdict: 'not_offered', raw: why });

const unexpected = (why: string, r: Reply): Outcome => ({ verdict: 'unexpected', raw: `${why}: ${describe(r)}` });

/** A reply as a failure message shows it: status, type, the start of the body. */
function describe(r: Reply): string {
  const body = r.body.length > 300 ? `${r.body.slice(0, 300)}…` : r.body;
  return `${r.status} ${r.headers['content-type'] ?? '(no type)'} ${JSON.stringify(body)}`;
}

/**
 * A query string or a form carries UTF-8, which has no lone surrogates (`encodeURIComponent`
 * throws on one; percent-encoded, its bytes decode to U+FFFD): such text cannot be sent there.
 */
function unsendable(texts: readonly (string | undefined)[], where: string): Outcome | undefined {
  return texts.some((text) => text !== undefined && LONE_SURROGATE.test(text))
    ? notOffered(`${where} carries UTF-8, which cannot hold a lone surrogate`)
    : undefined;
}

/** A code in a path: the router refuses a NUL in any path (400, before any door: docs/api.md, paths), and a path carries UTF-8. */
function pathCode(code: string): Outcome | undefined {
  if (code.includes('\0')) return notOffered('a path holding a NUL is refused by the router before any door');
  return unsendable([code], 'a path');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function jsonBody(r: Reply): Record<string, unknown> | undefined {
  const value = parseJson(r.body);
  return isObject(value) ? value : undefined;
}

/**
 * A door's own names for fields in `reason` renamed to the service's: `theirs` at its start, and a
 * camelCase name (which no service reason spells) as a whole word anywhere ("validSince must be
 * before validUntil").
 */
function renamed(reason: string, names: Readonly<Record<string, string>>): string {
  let text = reason;
  for (const [theirs, ours] of Object.entries(names)) {
    if (/[A-Z]/.test(theirs)) text = text.replace(new RegExp(`(?<![\\w-])${theirs}(?![\\w-])`, 'g'), ours);
    else if (text.startsWith(theirs) && !/[\w-]/.test(text.charAt(theirs.length))) text = ours + text.slice(theirs.length);
  }
  return text;
}

function send(caller: Caller, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Reply> {
  return request(caller.port, path, {
    method,
    headers: { 'x-forwarded-for': caller.address, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** `name=value` pairs as a query string, values percent-encoded (a NUL is `%00`). */
function queryOf(pairs: readonly (readonly [string, string | number | undefined])[]): string {
  const text = pairs
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
    .join('&');
  return text === '' ? '' : `?${text}`;
}

// ---- REST -------------------------------------------------------------------------------------

/**
 * REST's shapes (docs/api.md, errors): a success has its own status, a 404 an empty body, any other
 * refusal exactly `{"detail": string}`, and a 429 its `Retry-After`.
 */
function restOutcome(r: Reply, success: number, valid: (r: Reply) => boolean): Outcome {
  if (r.status === success) return valid(r) ? { verdict: 'accepted', raw: describe(r) } : unexpected(`not the ${success} of this operation`, r);
  if (r.status === 404) return r.body === '' ? { verdict: 'not_found', raw: describe(r) } : unexpected('a 404 of the API has an empty body', r);
  const body = jsonBody(r);
  const detail = body?.['detail'];
  if (r.headers['content-type'] !== 'application/json' || typeof detail !== 'string' || Object.keys(body!).length !== 1) {
    return unexpected('an API error is {"detail": string} in application/json', r);
  }
  const verdicts: Record<number, Verdict> = { 400: 'refused', 409: 'conflict', 429: 'rate_limited', 503: 'unavailable' };
  const verdict = verdicts[r.status];
  if (verdict === undefined) return unexpected('not a status of this operation', r);
  if (verdict === 'rate_limited' && !/^\d+$/.test(String(r.headers['retry-after']))) return unexpected('a 429 says when in Retry-After', r);
  return { verdict, reason: detail, raw: describe(r) };
}

const isRecord = (r: Reply): boolean => r.headers['content-type'] === 'application/json' && typeof jsonBody(r)?.['short_code'] === 'string';

const rest: Door = {
  name: 'rest',
  async create(input, caller) {
    const { url, code, title, tags, retention_days, max_visits, ...routing } = input;
    const body = { url, code, title, tags, retention_days, max_visits, ...routing };
    const r = await send(caller, 'POST', '/api/shorten', {}, body);
    return restOutcome(r, 201, (reply) => reply.body.startsWith('http') && reply.headers.location === reply.body);
  },
  async get(code, caller) {
    return pathCode(code) ?? restOutcome(await send(caller, 'GET', `/api/urls/${encodeURIComponent(code)}`), 200, isRecord);
  },
  async edit(code, changes, caller) {
    const refused = pathCode(code);
    if (refused) return refused;
    return restOutcome(await send(caller, 'PATCH', `/api/urls/${encodeURIComponent(code)}`, { 'x-api-key': caller.key }, changes), 200, isRecord);
  },
  async delete(code, caller) {
    const refused = pathCode(code);
    if (refused) return refused;
    const r = await send(caller, 'DELETE', `/api/urls/${encodeURIComponent(code)}`, { 'x-api-key': caller.key });
    return restOutcome(r, 204, (reply) => reply.body === '');
  },
  async list(query, caller) {
    const refused = unsendable([query.q, ...(query.tags ?? [])], 'a query string');
    if (refused) return refused;
    const path = `/api/urls${queryOf([
      ['q', query.q],
      ...(query.tags ?? []).map((tag) => ['tag', tag] as const),
      ['limit', query.limit],
      ['offset', query.offset],
    ])}`;
    const r = await send(caller, 'GET', path, { 'x-api-key': caller.key });
    return restOutcome(r, 200, (reply) => Array.isArray(jsonBody(reply)?.['urls']));
  },
};

// ---- MCP --------------------------------------------------------------------------------------

/**
 * MCP's `isError` result carries a text and no kind of failure, so the adapter tells them apart by
 * the service's words for each (docs/mcp.md): an unknown or expired code, a code in use, a store
 * that cannot read or write. Any other failure of the work is a refusal, its text the reason.
 */
const MCP_KINDS: readonly (readonly [RegExp, Verdict])[] = [
  [/^No short link has the code /, 'not_found'],
  [/^The short link .* has expired\.$/, 'not_found'],
  [/^code already in use$/, 'conflict'],
  [/^database unavailable$/, 'unavailable'],
  [/^storage is not writable right now /, 'unavailable'],
];

let rpcId = 0;

/** `tools/call` of `name` over HTTP; the outcome by MCP's shapes (docs/mcp.md). */
async function tool(caller: Caller, name: string, args: Record<string, unknown>): Promise<Outcome> {
  const id = ++rpcId;
  const r = await send(
    caller,
    'POST',
    '/mcp',
    { accept: 'application/json, text/event-stream' },
    {
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: args },
    },
  );
  const message = jsonBody(r);
  if (message === undefined || message['jsonrpc'] !== '2.0' || message['id'] !== id) return unexpected('a JSON-RPC answer echoing the id', r);
  const error = message['error'];
  if (isObject(error) && typeof error['message'] === 'string') {
    // A create past the limit: an HTTP 429 with Retry-After and the JSON-RPC error -32029.
    if (r.status === 429 && error['code'] === -32029 && /^\d+$/.test(String(r.headers['retry-after']))) {
      return { verdict: 'rate_limited', reason: error['message'], raw: describe(r) };
    }
    // Arguments that break the tool's inputSchema (a JSON type: an integer, a string): the protocol
    // error -32602, refused before the service and in the protocol's words ("Invalid arguments for
    // …"), so no reason of the service's. The schemas hold no rule of the service's (a range, a
    // length), so only an argument of the wrong JSON type is refused here.
    if (r.status === 200 && error['code'] === -32602) return { verdict: 'refused', raw: describe(r) };
    return unexpected('a JSON-RPC error of no failure of the work', r);
  }
  const result = message['result'];
  if (r.status !== 200 || !isObject(result) || !Array.isArray(result['content'])) return unexpected('a tool result', r);
  if (result['isError'] !== true) {
    return isObject(result['structuredContent']) ? { verdict: 'accepted', raw: describe(r) } : unexpected('a success has structuredContent', r);
  }
  const content = result['content'] as unknown[];
  const only = content[0];
  if (content.length !== 1 || !isObject(only) || only['type'] !== 'text' || typeof only['text'] !== 'string' || 'structuredContent' in result) {
    return unexpected('an isError result is one text and no structuredContent', r);
  }
  const text = only['text'];
  const kind = MCP_KINDS.find(([pattern]) => pattern.test(text));
  return kind === undefined ? { verdict: 'refused', reason: text, raw: describe(r) } : { verdict: kind[1], reason: text, raw: describe(r) };
}

/** Only what is given: an argument left out is not `undefined` in JSON. */
const defined = (args: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));

const mcp: Door = {
  name: 'mcp',
  create(input, caller) {
    const { url, code, title, tags, retention_days, max_visits, rules, forward_query, valid_since, valid_until, password } = input;
    return tool(
      caller,
      'shorten_url',
      defined({ url, code, title, tags, retention_days, max_visits, rules, forward_query, valid_since, valid_until, password }),
    );
  },
  get(code, caller) {
    return tool(caller, 'get_url', { code });
  },
  edit(code, changes, caller) {
    return tool(caller, 'update_url', defined({ code, api_key: caller.key, ...changes }));
  },
  delete(code, caller) {
    return tool(caller, 'delete_url', { code, api_key: caller.key });
  },
  list(query, caller) {
    return tool(caller, 'list_urls', defined({ api_key: caller.key, q: query.q, tag: query.tags, limit: query.limit, offset: query.offset }));
  },
};

// ---- Shlink's REST v3 -------------------------------------------------------------------------

const SHLINK_TYPE = 'https://shlink.io/api/error/';

/** Shlink's errors this suite meets: `type` → the status and title Shlink gives it, and the verdict. */
const SHLINK_PROBLEMS: Readonly<Record<string, readonly [status: number, title: string, verdict: Verdict]>> = {
  [`${SHLINK_TYPE}invalid-data`]: [400, 'Invalid data', 'refused'],
  [`${SHLINK_TYPE}non-unique-slug`]: [400, 'Invalid custom slug', 'conflict'],
  [`${SHLINK_TYPE}short-url-not-found`]: [404, 'Short URL not found', 'not_found'],
  // What Shlink has no error for: RFC 7807's about:blank, titled with the reason phrase.
  'about:blank 429': [429, 'Too Many Requests', 'rate_limited'],
  'about:blank 503': [503, 'Service Unavailable', 'unavailable'],
};

/** Shlink's names of the service's fields, in a create or an edit body and in a list's query. */
const SHLINK_BODY_NAMES = { longUrl: 'url', customSlug: 'code', maxVisits: 'max_visits', validSince: 'valid_since', validUntil: 'valid_until' };
const SHLINK_QUERY_NAMES = { searchTerm: 'q', tags: 'tag' };

/** Shlink's shapes: RFC 7807 problem details (`application/problem+json`, `type`, `title`, `detail`, `status`). */
function shlinkOutcome(r: Reply, success: number, names: Readonly<Record<string, string>>): Outcome {
  if (r.status === success) return { verdict: 'accepted', raw: describe(r) };
  const body = jsonBody(r);
  if (r.headers['content-type'] !== 'application/problem+json' || body === undefined) return unexpected('a Shlink error is application/problem+json', r);
  const { type, title, detail, status } = body;
  const known = SHLINK_PROBLEMS[type === 'about:blank' ? `about:blank ${r.status}` : String(type)];
  if (known === undefined || typeof detail !== 'string' || status !== r.status || known[0] !== r.status || title !== known[1]) {
    return unexpected("not one of Shlink's problems with its type, title and status", r);
  }
  if (known[2] === 'rate_limited' && !/^\d+$/.test(String(r.headers['retry-after']))) return unexpected('a 429 says when in Retry-After', r);
  return { verdict: known[2], reason: renamed(detail, names), raw: describe(r) };
}

/**
 * Shlink has no count of days: its `validUntil` is the link's `valid_until` (docs/compat.md), a
 * deadline, not a retention; a retention is not what a Shlink client sends.
 */
const SHLINK_NO_RETENTION = "Shlink's validUntil is a deadline (valid_until), not a count of days";
/** An instant as Shlink's clients write it. */
const iso = (seconds: number | undefined): string | undefined =>
  seconds === undefined ? undefined : new Date(seconds * 1000).toISOString().replace('.000Z', '+00:00');

const shlinkPath = (code: string): string => `/rest/v3/short-urls/${encodeURIComponent(code)}`;

const shlink: Door = {
  name: 'shlink',
  async create(input, caller) {
    if (input.retention_days !== undefined) return notOffered(SHLINK_NO_RETENTION);
    if (input.rules !== undefined) return notOffered('Shlink sets rules through its redirect-rules route, not in a create');
    if (input.password !== undefined) return notOffered('Shlink has no link passwords');
    const body = {
      longUrl: input.url,
      customSlug: input.code,
      title: input.title,
      tags: input.tags,
      maxVisits: input.max_visits,
      forwardQuery: input.forward_query,
      validSince: iso(input.valid_since),
      validUntil: iso(input.valid_until),
    };
    return shlinkOutcome(await send(caller, 'POST', '/rest/v3/short-urls', { 'x-api-key': caller.key }, body), 200, SHLINK_BODY_NAMES);
  },
  async get(code, caller) {
    return pathCode(code) ?? shlinkOutcome(await send(caller, 'GET', shlinkPath(code), { 'x-api-key': caller.key }), 200, SHLINK_BODY_NAMES);
  },
  async edit(code, changes, caller) {
    const refused = pathCode(code);
    if (refused) return refused;
    if (changes.retention_days !== undefined) return notOffered(SHLINK_NO_RETENTION);
    const body = { longUrl: changes.url, title: changes.title, tags: changes.tags, maxVisits: changes.max_visits };
    return shlinkOutcome(await send(caller, 'PATCH', shlinkPath(code), { 'x-api-key': caller.key }, body), 200, SHLINK_BODY_NAMES);
  },
  async delete(code, caller) {
    return pathCode(code) ?? shlinkOutcome(await send(caller, 'DELETE', shlinkPath(code), { 'x-api-key': caller.key }), 204, SHLINK_BODY_NAMES);
  },
  async list(query, caller) {
    if (query.limit !== undefined || query.offset !== undefined) {
      return notOffered('Shlink pages by page and itemsPerPage (any size, -1 for all, as Shlink does), not by limit and offset');
    }
    if (query.q === '') return notOffered('Shlink reads an empty searchTerm as no search, as Shlink does');
    const refused = unsendable([query.q, ...(query.tags ?? [])], 'a query string');
    if (refused) return refused;
    // tagsMode=all: the links having every tag named, as the REST list's tag filter keeps them.
    const path = `/rest/v3/short-urls${queryOf([
      ['searchTerm', query.q],
      ...(query.tags ?? []).map((tag) => ['tags[]', tag] as const),
      ['tagsMode', query.tags === undefined ? undefined : 'all'],
    ])}`;
    return shlinkOutcome(await send(caller, 'GET', path, { 'x-api-key': caller.key }), 200, SHLINK_QUERY_NAMES);
  },
};

// ---- YOURLS -----------------------------------------------------------------------------------

/** `shorturl`'s failure codes: the verdict each stands for, and whether its message is the service's reason. */
const YOURLS_CODES: Readonly<Record<string, readonly [Verdict, 'reason' | 'own words']>> = {
  // A refused URL is YOURLS' one message, "Missing or malformed URL" (or "URL is a short URL").
  'error:nourl': ['refused', 'own words'],
  'error:noloop': ['refused', 'own words'],
  'error:keyword': ['refused', 'reason'],
  'error:title': ['refused', 'reason'],
  'error:flood': ['rate_limited', 'own words'],
  'error:db': ['unavailable', 'reason'],
};

/** YOURLS' message for a keyword held by a link (and for a reserved one: YOURLS says both alike). */
const KEYWORD_TAKEN = /^Short URL .* already exists in database or is reserved$/;

/** `GET /yourls-api.php` with `params`, signed, in YOURLS' JSON. */
async function yourlsCall(caller: Caller, params: readonly (readonly [string, string | undefined])[]): Promise<Reply | Outcome> {
  const refused = unsendable(
    params.map(([, value]) => value),
    'a query string',
  );
  if (refused) return refused;
  return send(caller, 'GET', `/yourls-api.php${queryOf([...params, ['format', 'json'], ['signature', caller.key]])}`);
}

/** YOURLS' shapes: JSON whose `statusCode` (else `errorCode`) is the HTTP status. */
function yourlsFields(r: Reply): Record<string, unknown> | undefined {
  const body = jsonBody(r);
  if (r.headers['content-type'] !== 'application/json; charset=utf-8' || body === undefined) return undefined;
  const code = body['statusCode'] ?? body['errorCode'] ?? '200';
  return String(r.status) === code ? body : undefined;
}

/** The outcome of `shorturl`: `status` success or fail, with YOURLS' error `code`. */
function shortenOutcome(r: Reply): Outcome {
  const fields = yourlsFields(r);
  if (fields === undefined) return unexpected("YOURLS' JSON whose statusCode is the status", r);
  if (fields['status'] === 'success' && r.status === 200) return { verdict: 'accepted', raw: describe(r) };
  const message = fields['message'];
  if (fields['status'] !== 'fail' || typeof message !== 'string') return unexpected('a shorturl answer is success or fail', r);
  if (fields['code'] === 'error:keyword' && KEYWORD_TAKEN.test(message)) return { verdict: 'conflict', raw: describe(r) };
  const known = YOURLS_CODES[String(fields['code'])];
  if (known === undefined) return unexpected('not a failure code of shorturl', r);
  if (known[0] === 'rate_limited' && !/^\d+$/.test(String(r.headers['retry-after']))) return unexpected('a 429 says when in Retry-After', r);
  return known[1] === 'reason' ? { verdict: known[0], reason: message, raw: describe(r) } : { verdict: known[0], raw: describe(r) };
}

/** The outcome of a read (`expand`, `stats`): 200 `success`, YOURLS' 404, or its 503 with the service's words. */
function readOutcome(r: Reply): Outcome {
  const fields = yourlsFields(r);
  if (fields === undefined) return unexpected("YOURLS' JSON whose statusCode is the status", r);
  const message = fields['message'];
  if (r.status === 200 && message === 'success') return { verdict: 'accepted', raw: describe(r) };
  if (r.status === 404 && message === 'Error: short URL not found') return { verdict: 'not_found', raw: describe(r) };
  if (r.status === 503 && typeof message === 'string') return { verdict: 'unavailable', reason: message, raw: describe(r) };
  return unexpected('not an answer of this action', r);
}

const yourls: Door = {
  name: 'yourls',
  async create(input, caller) {
    if (input.tags !== undefined) return notOffered("YOURLS' shorturl takes no tags");
    if (input.retention_days !== undefined || input.max_visits !== undefined) return notOffered("YOURLS' shorturl takes no retention and no visit limit");
    const { rules, forward_query, valid_since, valid_until, password } = input;
    if ([rules, forward_query, valid_since, valid_until, password].some((v) => v !== undefined)) return notOffered("YOURLS' shorturl takes no routing");
    const r = await yourlsCall(caller, [
      ['action', 'shorturl'],
      ['url', input.url],
      ['keyword', input.code],
      ['title', input.title],
    ]);
    return 'verdict' in r ? r : shortenOutcome(r);
  },
  async get(code, caller) {
    const r = await yourlsCall(caller, [
      ['action', 'expand'],
      ['shorturl', code],
    ]);
    return 'verdict' in r ? r : readOutcome(r);
  },
  async edit() {
    return notOffered("YOURLS' API has no edit");
  },
  async delete() {
    return notOffered("YOURLS' API has no delete");
  },
  async list(query, caller) {
    if (query.q !== undefined || query.tags !== undefined) return notOffered("YOURLS' stats has no search and no tag filter");
    if (query.limit !== undefined || query.offset !== undefined) {
      return notOffered("YOURLS' stats reads limit and start as PHP integers and refuses none, as YOURLS does");
    }
    const r = await yourlsCall(caller, [
      ['action', 'stats'],
      ['filter', 'last'],
      ['limit', '10'],
    ]);
    return 'verdict' in r ? r : readOutcome(r);
  },
};

export const ADAPTERS: Readonly<Record<DoorName, Door>> = { rest, mcp, shlink, yourls };
