/**
 * Shlink's REST API v3 (docs/compat.md), the routes its JS SDK and web client call, as a thin door
 * onto the service: each handler reads Shlink's parameters (`params.ts`), asks the service, and
 * answers in Shlink's shapes (`shapes.ts`) or with Shlink's problem details (`problems.ts`).
 *
 * Credentials: every route but health needs `X-Api-Key`, one of the admin keys. The routes are
 * public to the bearer-token gate (`Route.public`): Shlink's clients cannot send `Authorization`,
 * so the key is this surface's own credential, checked here, and a request without it gets
 * Shlink's 401, never the gate's `{"detail"}`.
 */
import type { IncomingMessage } from 'node:http';
import { HttpError } from '../../errors.ts';
import { readBody } from '../../http/body.ts';
import { flatten, retryAfter } from '../../http/headers.ts';
import type { Ctx, RouteHandler } from '../../http/context.ts';
import type { Route } from '../../http/router.ts';
import type { RouteDoc } from '../../published/openapi.ts';
import { JSON_TYPE, type Responder } from '../../http/respond.ts';
import type { UrlRecord } from '../../links/record.ts';
import type { Failure, Service } from '../../links/service.ts';
import { normalTag } from '../../links/validate.ts';
import { StoreUnavailableError } from '../../store/link-store.ts';
import { listShortUrls, summaries, TAG_ORDERS, tagTable, botVisits } from './lists.ts';
import { isProblem, parseCreateBody, parseEditBody, parseListParams, parseSearchTerm, parseVisitParams, type CreateRequest } from './params.ts';
import {
  INVALID_KEY,
  invalidData,
  MERCURE_OFF,
  MISSING_KEY,
  nonUniqueSlug,
  plainProblem,
  problem,
  PROBLEM_TYPE,
  refusedInput,
  routeNotFound,
  shortUrlNotFound,
  Problem,
} from './problems.ts';
import { pageBounds, pagination, shortUrlJson, summary, visitJson, type ShortUrlJson } from './shapes.ts';

/** The Shlink release whose REST API this surface implements, as `/rest/health` reports it (docs/compat.md). */
export const SHLINK_VERSION = '4.2.0';

const HEALTH_TYPE = 'application/health+json';
const DAY = 86400;

export interface ShlinkDeps {
  service: Service;
  reply: Responder;
  baseUrl: string;
  /** The bearer-token gate is on: an unknown path then answers only a caller with a key. */
  gated: boolean;
  /** Undefined while reads work, else why not (the readiness probe's question). */
  readiness: () => string | undefined;
  /** Milliseconds since the epoch: a `validUntil` becomes a retention counted from now. */
  now: () => number;
  maxBodyBytes: number;
  minShortLength: number;
  maxShortLength: number;
}

/**
 * A route of the table (the REST door's own shape, spelled here so no peer imports that door); a
 * peer's routes carry no documentation of ours: the peer's documents describe them.
 */
type PeerRoute = Route<RouteHandler> & { doc: RouteDoc };

/** What a handler answers: a JSON body and its status, or a problem. */
type Answer = { status: number; body: unknown; type?: string } | Problem;

const ok = (body: unknown, status = 200): Answer => ({ status, body, type: JSON_TYPE });
const NO_CONTENT: Answer = { status: 204, body: undefined };

/** A URL as the service stores it (its WHATWG serialization), or undefined when it is none. */
function normalized(url: string): string | undefined {
  try {
    return new URL(url).href;
  } catch {
    return undefined;
  }
}

/** A store that cannot be read or written: Shlink has no error type for it, so RFC 7807's plain one. */
const unavailable = (detail: string): Problem => plainProblem(503, 'Service Unavailable', detail);

/** A service failure of a link named `code` as Shlink says it. */
function failed(failure: Failure, code: string): Problem {
  switch (failure.error) {
    case 'not_found':
      return shortUrlNotFound(code);
    case 'invalid':
      return refusedInput(failure.detail);
    case 'conflict':
      return nonUniqueSlug(code);
    case 'unavailable':
      return unavailable(failure.detail);
    case 'rate_limited':
      // Shlink has no rate limit of its own, so no error type for it: RFC 7807's plain one.
      return plainProblem(429, 'Too Many Requests', failure.detail, [retryAfter(failure.retryAfter)]);
  }
}

/** A request body: one JSON object (Shlink's clients send JSON whatever their `Content-Type`); empty is `{}`. */
async function readObject(req: IncomingMessage, limit: number): Promise<Readonly<Record<string, unknown>> | Problem> {
  const text = (await readBody(req, limit)).toString('utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return problem('malformed-request-body', 'Provided request does not contain a valid JSON body.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return invalidData([], 'The request body must be a JSON object');
  return value as Record<string, unknown>;
}

export function shlinkRoutes(deps: ShlinkDeps): PeerRoute[] {
  const { service, reply } = deps;
  const host = new URL(deps.baseUrl).host.toLowerCase();
  const limits = { minShortLength: deps.minShortLength, maxShortLength: deps.maxShortLength, host };
  const seconds = (): number => Math.floor(deps.now() / 1000);

  /** Undefined when the request carries one of the admin keys, else Shlink's 401. */
  function credential(ctx: Ctx): Problem | undefined {
    const key = ctx.req.headers['x-api-key'];
    if (key === undefined || key === '') return MISSING_KEY;
    return typeof key === 'string' && service.isAdminKey(key) ? undefined : INVALID_KEY;
  }

  function send(ctx: Ctx, answer: Answer): void {
    if (answer.status === 204) return reply.empty(ctx.res, 204);
    if (answer instanceof Problem) return reply.send(ctx.res, answer.status, PROBLEM_TYPE, JSON.stringify(answer.body), flatten(answer.headers));
    reply.send(ctx.res, answer.status, answer.type ?? JSON_TYPE, JSON.stringify(answer.body));
  }

  /**
   * A route's handler: the key first (unless `open`), then the work; a body refused by the reader
   * (too large, 413) and a store that cannot be read or written (a database down, 503) are
   * problems like any other answer of this surface, never the REST door's `{"detail"}`.
   */
  function handler(work: (ctx: Ctx) => Answer | Promise<Answer>, open = false): RouteHandler {
    return async function shlink(ctx) {
      const refused = open ? undefined : credential(ctx);
      if (refused !== undefined) return send(ctx, refused);
      let answer: Answer;
      try {
        answer = await work(ctx);
      } catch (err) {
        if (err instanceof StoreUnavailableError) answer = unavailable(err.message);
        else if (err instanceof HttpError && err.detail !== undefined)
          answer = plainProblem(err.status, err.status === 413 ? 'Payload Too Large' : 'Bad Request', err.detail);
        else throw err;
      }
      send(ctx, answer);
    };
  }

  const health = handler(() => {
    const down = deps.readiness();
    return {
      status: down === undefined ? 200 : 503,
      type: HEALTH_TYPE,
      body: {
        status: down === undefined ? 'pass' : 'fail',
        version: SHLINK_VERSION,
        links: { about: 'https://shlink.io', project: 'https://github.com/shlinkio/shlink' },
      },
    };
  }, true);

  /** A record in Shlink's shape, with its visits summary. */
  async function shortUrl(record: UrlRecord): Promise<ShortUrlJson> {
    return shortUrlJson(record, summary(record.visit_count, await botVisits(service, record)));
  }

  async function list(ctx: Ctx): Promise<Answer> {
    const params = parseListParams(ctx.query(), host);
    if (isProblem(params)) return params;
    const page = await listShortUrls(service, params);
    const visits = await summaries(service, page.records);
    return ok({
      shortUrls: {
        data: page.records.map((r, i) => shortUrlJson(r, visits[i]!)),
        pagination: pagination(params.page, params.itemsPerPage, page.total, page.records.length),
      },
    });
  }

  /**
   * `findIfExists` (Shlink's rule, on what this service can ask): the link of `customSlug` when it
   * has this long URL, or else the newest link of the long URL; either only when every other
   * field given matches it too. Undefined: create one.
   */
  async function existing(request: CreateRequest): Promise<UrlRecord | undefined> {
    const found = typeof request.code === 'string' && request.code !== '' ? await service.get(request.code) : await service.lookup(request.url);
    if (!found.ok) return undefined;
    const r = found.record;
    if (typeof request.url !== 'string' || normalized(request.url) !== r.original_url) return undefined;
    if (request.maxVisits !== undefined && request.maxVisits !== null && r.max_visits !== request.maxVisits) return undefined;
    if (request.validUntil !== undefined && r.expires_at !== r.created_at + Math.ceil((request.validUntil - r.created_at) / DAY) * DAY) return undefined;
    if (Array.isArray(request.tags) && [...new Set(request.tags.map((t) => normalTag(String(t).trim())))].sort().join('\n') !== r.tags.join('\n'))
      return undefined;
    return r;
  }

  async function create(ctx: Ctx): Promise<Answer> {
    const body = await readObject(ctx.req, deps.maxBodyBytes);
    if (isProblem(body)) return body;
    const request = parseCreateBody(body, limits, seconds());
    if (isProblem(request)) return request;
    const found = request.findIfExists ? await existing(request) : undefined;
    if (found !== undefined) return ok(await shortUrl(found));
    const made = await service.shorten({
      url: request.url,
      code: request.code,
      title: request.title,
      tags: request.tags,
      maxVisits: request.maxVisits,
      retentionDays: request.retentionDays,
      from: ctx.req,
    });
    if (!made.ok) return failed(made, typeof request.code === 'string' ? request.code : '');
    return ok(await shortUrl(made.record));
  }

  async function get(ctx: Ctx): Promise<Answer> {
    const code = ctx.params['code']!;
    const found = await service.get(code);
    return found.ok ? ok(await shortUrl(found.record)) : shortUrlNotFound(code);
  }

  async function edit(ctx: Ctx): Promise<Answer> {
    const code = ctx.params['code']!;
    const body = await readObject(ctx.req, deps.maxBodyBytes);
    if (isProblem(body)) return body;
    const found = await service.get(code);
    if (!found.ok) return shortUrlNotFound(code);
    const fields = parseEditBody(body, limits, found.record.created_at);
    if (isProblem(fields)) return fields;
    const updated = Object.keys(fields).length === 0 ? found : await service.update(code, fields);
    return updated.ok ? ok(await shortUrl(updated.record)) : failed(updated, code);
  }

  async function remove(ctx: Ctx): Promise<Answer> {
    const code = ctx.params['code']!;
    const removed = await service.remove(code);
    return removed.ok ? NO_CONTENT : failed(removed, code);
  }

  async function visits(ctx: Ctx): Promise<Answer> {
    const code = ctx.params['code']!;
    const params = parseVisitParams(ctx.query());
    if (isProblem(params)) return params;
    const filter = { from: params.from, to: params.to, bots: params.excludeBots ? 'exclude' : 'include' } as const;
    // The first slice gives the total; a page longer than the service's largest is read in slices.
    const first = params.itemsPerPage === -1 ? 0 : (params.page - 1) * params.itemsPerPage;
    const wanted = params.itemsPerPage === -1 ? Infinity : params.itemsPerPage;
    let got = await service.visits(code, filter, { limit: Math.min(wanted, 1000), offset: first });
    if (!got.ok) return got.error === 'not_found' ? shortUrlNotFound(code) : refusedInput(got.detail);
    const total = got.total;
    const [from, to] = pageBounds(params.page, params.itemsPerPage, total);
    const events = got.visits.slice(0, to - from);
    while (events.length < to - from && got.visits.length > 0) {
      got = await service.visits(code, filter, { limit: Math.min(to - from - events.length, 1000), offset: from + events.length });
      if (!got.ok) break;
      events.push(...got.visits);
    }
    const link = service.shortUrl(code);
    return ok({ visits: { data: events.map((e) => visitJson(e, link)), pagination: pagination(params.page, params.itemsPerPage, total, events.length) } });
  }

  async function deleteVisits(ctx: Ctx): Promise<Answer> {
    const code = ctx.params['code']!;
    const deleted = await service.deleteVisits(code);
    return deleted.ok ? ok({ deletedVisits: deleted.deleted }) : failed(deleted, code);
  }

  /** There are no redirect rules: a link's only target is its long URL. */
  async function redirectRules(ctx: Ctx): Promise<Answer> {
    const code = ctx.params['code']!;
    if (ctx.method === 'POST') {
      const body = await readObject(ctx.req, deps.maxBodyBytes);
      if (isProblem(body)) return body;
      if (Array.isArray(body['redirectRules']) && body['redirectRules'].length > 0) return invalidData(['redirectRules'], 'redirect rules are not supported');
    }
    const found = await service.get(code);
    return found.ok ? ok({ defaultLongUrl: found.record.original_url, redirectRules: [] }) : shortUrlNotFound(code);
  }

  /** Every live link's visits since 1970 (the stats of every link, in months): this service records no orphan visits. */
  async function overview(): Promise<Answer> {
    const stats = await service.stats(null, { from: 0, interval: 'month', bots: 'include' });
    if (!stats.ok) return plainProblem(500, 'Internal Server Error', 'the visit totals could not be counted');
    return ok({ visits: { nonOrphanVisits: summary(stats.stats.visit_count, stats.stats.bots), orphanVisits: summary(0, 0) } });
  }

  /** The tags, or their stats: `searchTerm`, `orderBy` (`tag`, counts), `page`, `itemsPerPage` (default all). */
  async function tags(ctx: Ctx, withStats: boolean): Promise<Answer> {
    const query = ctx.query();
    const [field = 'tag', dir = 'ASC'] = (query.get('orderBy') || 'tag-ASC').split('-');
    const compare = TAG_ORDERS.get(field);
    if (compare === undefined || (dir !== 'ASC' && dir !== 'DESC') || (!withStats && field !== 'tag')) {
      return invalidData(['orderBy'], `orderBy must be one of ${withStats ? [...TAG_ORDERS.keys()].join(', ') : 'tag'}, followed by -ASC or -DESC`);
    }
    const params = parseVisitParams(query);
    if (isProblem(params)) return params;
    const searchTerm = parseSearchTerm(query);
    if (isProblem(searchTerm)) return searchTerm;
    const search = searchTerm.toLowerCase();
    const rows = (await tagTable(service, withStats)).filter((t) => t.tag.toLowerCase().includes(search));
    rows.sort((a, b) => (dir === 'ASC' ? 1 : -1) * compare(a, b));
    const [from, to] = pageBounds(params.page, params.itemsPerPage, rows.length);
    const page = rows.slice(from, to);
    return ok({
      tags: { data: withStats ? page : page.map((t) => t.tag), pagination: pagination(params.page, params.itemsPerPage, rows.length, page.length) },
    });
  }

  const noRedirects = { baseUrlRedirect: null, regular404Redirect: null, invalidShortUrlRedirect: null };
  const domains = { domains: { data: [{ domain: host, isDefault: true, redirects: noRedirects }], defaultRedirects: noRedirects } };

  /** Shlink's 404 of a path it has no route for; behind the gate only a caller with a key learns even that. */
  const unknown = handler((ctx) => routeNotFound(ctx.method, new URL(ctx.req.url ?? '/', 'http://x').pathname), !deps.gated);
  const anyMethod = { GET: unknown, POST: unknown, PUT: unknown, PATCH: unknown, DELETE: unknown };

  const route = (path: string, methods: PeerRoute['methods']): PeerRoute => ({ path, methods, public: true, doc: {} });
  const v3 = '/rest/v3';
  return [
    route('/rest/health', { GET: health }),
    route(`${v3}/health`, { GET: health }),
    route(`${v3}/short-urls`, { GET: handler(list), POST: handler(create) }),
    route(`${v3}/short-urls/:code`, { GET: handler(get), PATCH: handler(edit), DELETE: handler(remove) }),
    route(`${v3}/short-urls/:code/visits`, { GET: handler(visits), DELETE: handler(deleteVisits) }),
    route(`${v3}/short-urls/:code/redirect-rules`, { GET: handler(redirectRules), POST: handler(redirectRules) }),
    route(`${v3}/visits`, { GET: handler(overview) }),
    route(`${v3}/tags`, { GET: handler((ctx) => tags(ctx, false)) }),
    route(`${v3}/tags/stats`, { GET: handler((ctx) => tags(ctx, true)) }),
    route(`${v3}/domains`, { GET: handler(() => ok(domains)) }),
    route(`${v3}/mercure-info`, { GET: handler(() => MERCURE_OFF) }),
    // `rest` is this surface's first segment: no other path under it reaches the short links.
    route('/rest', anyMethod),
    route('/rest/*', anyMethod),
  ];
}
