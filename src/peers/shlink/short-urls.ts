/**
 * The short URLs of Shlink's REST API v3 (docs/compat.md): the list, a create (with
 * `findIfExists`), one link, its edit and delete, and its redirect rules. Each handler reads
 * Shlink's parameters and bodies (`params.ts`, `bodies.ts`, `redirect-rules.ts`), asks the
 * service, and answers in Shlink's shapes or problems (`answers.ts`); the key and its role were
 * checked by the route (`routes.ts`).
 */
import type { Ctx } from '../../http/context.ts';
import type { Principal } from '../../links/access.ts';
import type { Failure } from '../../links/outcomes.ts';
import type { UrlRecord } from '../../links/record.ts';
import type { Service } from '../../links/service.ts';
import { checkUrl, normalTag, Refusal } from '../../links/validate.ts';
import { failed, NO_CONTENT, ok, readObject, type Answer } from './answers.ts';
import { parseCreateBody, parseEditBody, type CreateRequest, type Limits } from './bodies.ts';
import { botVisits, listShortUrls, summaries } from './lists.ts';
import { isProblem, parseListParams } from './params.ts';
import { invalidData } from './problems.ts';
import { fromShlinkRules, shlinkPath, toShlinkRules } from './redirect-rules.ts';
import { pagination, shortUrlJson, summary } from './shapes.ts';

/** What every handler of the surface is given, once. */
export interface ShlinkContext {
  service: Service;
  /** The code lengths and this service's domain. */
  limits: Limits;
  /** Unix seconds now: which links are past their `validUntil`. */
  seconds: () => number;
  maxBodyBytes: number;
}

/** A URL as the service stores it (its WHATWG serialization), or undefined when it is none. */
function normalized(url: string): string | undefined {
  try {
    return new URL(url).href;
  } catch {
    return undefined;
  }
}

/** A record in Shlink's shape, with its visits summary; the store's failure to count its bots is the answer's. */
async function shortUrl(c: ShlinkContext, record: UrlRecord): Promise<Answer> {
  const bots = await botVisits(c.service, record);
  return typeof bots === 'number' ? ok(shortUrlJson(record, summary(record.visit_count, bots))) : failed(bots, record.short_code);
}

export async function list(c: ShlinkContext, ctx: Ctx, who: Principal): Promise<Answer> {
  const params = parseListParams(ctx.query());
  if (isProblem(params)) return params;
  const page = await listShortUrls(c.service, params, who, c.seconds());
  if (!('records' in page)) return failed(page, '');
  const visits = await summaries(c.service, page.records);
  if (!Array.isArray(visits)) return failed(visits, '');
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
 * field given matches it too. Undefined: create one. A store that cannot be read is its failure.
 */
async function existing(c: ShlinkContext, request: CreateRequest): Promise<UrlRecord | undefined | Failure> {
  const found =
    typeof request.code === 'string' && request.code !== ''
      ? await c.service.get(request.code, request.domain)
      : await c.service.lookup(request.url, request.domain || 'default');
  if (!found.ok) return found.error === 'unavailable' ? found : undefined;
  const r = found.record;
  if (typeof request.url !== 'string' || normalized(request.url) !== r.original_url) return undefined;
  if (request.maxVisits !== undefined && request.maxVisits !== null && r.max_visits !== request.maxVisits) return undefined;
  if (request.validSince !== undefined && r.valid_since !== request.validSince) return undefined;
  if (request.validUntil !== undefined && r.valid_until !== request.validUntil) return undefined;
  if (Array.isArray(request.tags) && [...new Set(request.tags.map((t: unknown) => normalTag(String(t).trim())))].sort().join('\n') !== r.tags.join('\n'))
    return undefined;
  return r;
}

/** A create; `who`: the key's principal, whose stored key becomes the link's author. */
export async function create(c: ShlinkContext, ctx: Ctx, who: Principal | undefined): Promise<Answer> {
  const body = await readObject(ctx.req, c.maxBodyBytes);
  if (isProblem(body)) return body;
  const request = parseCreateBody(body, c.limits);
  if (isProblem(request)) return request;
  const found = request.findIfExists ? await existing(c, request) : undefined;
  if (found !== undefined && 'error' in found) return failed(found, '');
  if (found !== undefined) return shortUrl(c, found);
  const made = await c.service.shorten({
    url: request.url,
    code: request.code,
    title: request.title,
    tags: request.tags,
    maxVisits: request.maxVisits,
    // A link made here ends by its `validUntil` alone: no retention (`bodies.ts`).
    retentionDays: 0,
    routing: request.routing,
    from: ctx.req,
    author: who?.id,
    keyDomain: who?.domain,
    domain: request.domain,
  });
  if (!made.ok) return failed(made, typeof request.code === 'string' ? request.code : '');
  return shortUrl(c, made.record);
}

/** `?domain=` as Shlink's clients send it (a host, or absent for the default domain). */
export const domainParam = (ctx: Ctx): string | undefined => ctx.query().get('domain') ?? undefined;

export async function get(c: ShlinkContext, ctx: Ctx): Promise<Answer> {
  const code = ctx.params['code']!;
  const found = await c.service.get(code, domainParam(ctx));
  return found.ok ? shortUrl(c, found.record) : failed(found, code);
}

export async function edit(c: ShlinkContext, ctx: Ctx): Promise<Answer> {
  const code = ctx.params['code']!;
  const body = await readObject(ctx.req, c.maxBodyBytes);
  if (isProblem(body)) return body;
  const found = await c.service.get(code, domainParam(ctx));
  if (!found.ok) return failed(found, code);
  const edit = parseEditBody(body, found.record.expires_at);
  if (isProblem(edit)) return edit;
  const updated = Object.keys(edit).length === 0 ? found : await c.service.update(code, edit, domainParam(ctx));
  return updated.ok ? shortUrl(c, updated.record) : failed(updated, code);
}

export async function remove(c: ShlinkContext, ctx: Ctx): Promise<Answer> {
  const code = ctx.params['code']!;
  const removed = await c.service.remove(code, domainParam(ctx));
  return removed.ok ? NO_CONTENT : failed(removed, code);
}

/** A link's redirect rules in Shlink's shape, with its long URL as the default. */
export async function redirectRules(c: ShlinkContext, ctx: Ctx): Promise<Answer> {
  const code = ctx.params['code']!;
  const found = await c.service.get(code, domainParam(ctx));
  return found.ok ? ok(toShlinkRules(found.record.rules, found.record.original_url)) : failed(found, code);
}

/**
 * Shlink's `POST …/redirect-rules`: the link's rules replaced by the list given (an empty list
 * removes them), answered as `GET` answers them. As in Shlink, the link is looked up before the
 * rules are read: an unknown code is its 404 whatever the body. A URL is checked here by the
 * service's rule but its length, which the service checks again when it stores the rules.
 */
export async function setRedirectRules(c: ShlinkContext, ctx: Ctx): Promise<Answer> {
  const code = ctx.params['code']!;
  const body = await readObject(ctx.req, c.maxBodyBytes);
  if (isProblem(body)) return body;
  const found = await c.service.get(code, domainParam(ctx));
  if (!found.ok) return failed(found, code);
  const urlRules = { maxLength: Number.POSITIVE_INFINITY, baseUrl: c.service.domains.origin(null), otherBases: c.service.domains.otherBases };
  const rules = fromShlinkRules(body, (url) => checkUrl(url, urlRules));
  if (rules instanceof Refusal) return invalidData(['redirectRules'], rules.detail);
  const updated = await c.service.update(code, { routing: { rules } }, domainParam(ctx));
  if (!updated.ok && updated.error === 'invalid' && /^rules\b/.test(updated.detail)) return invalidData(['redirectRules'], shlinkPath(updated.detail));
  return updated.ok ? ok(toShlinkRules(updated.record.rules, updated.record.original_url)) : failed(updated, code);
}
