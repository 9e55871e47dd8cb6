/**
 * The visits and tags of Shlink's REST API v3 (docs/compat.md): a link's visits and their
 * deletion, the overview of every visit, and the tags with their stats, read from the service and
 * answered in Shlink's shapes or problems (`answers.ts`).
 */
import { domainParam } from './short-urls.ts';
import type { Ctx } from '../../http/context.ts';
import { narrowed, type Principal } from '../../links/access.ts';
import { failed, ok, unavailable, type Answer } from './answers.ts';
import { listedTotals, TAG_ORDERS, tagTable } from './lists.ts';
import { isProblem, parseSearchTerm, parseVisitParams } from './params.ts';
import { invalidData, plainProblem } from './problems.ts';
import { pageBounds, pagination, summary, visitJson } from './shapes.ts';
import type { ShlinkContext } from './short-urls.ts';

export async function visits(c: ShlinkContext, ctx: Ctx): Promise<Answer> {
  const code = ctx.params['code']!;
  const params = parseVisitParams(ctx.query());
  if (isProblem(params)) return params;
  const filter = { from: params.from, to: params.to, bots: params.excludeBots ? 'exclude' : 'include' } as const;
  // The first slice gives the total; a page longer than the service's largest is read in slices.
  const first = params.itemsPerPage === -1 ? 0 : (params.page - 1) * params.itemsPerPage;
  const wanted = params.itemsPerPage === -1 ? Infinity : params.itemsPerPage;
  const domain = domainParam(ctx);
  let got = await c.service.visits(code, filter, { limit: Math.min(wanted, 1000), offset: first }, domain);
  if (!got.ok) return failed(got, code);
  const total = got.total;
  const [from, to] = pageBounds(params.page, params.itemsPerPage, total);
  const events = got.visits.slice(0, to - from);
  while (events.length < to - from && got.visits.length > 0) {
    got = await c.service.visits(code, filter, { limit: Math.min(to - from - events.length, 1000), offset: from + events.length }, domain);
    if (!got.ok) return failed(got, code);
    events.push(...got.visits);
  }
  const named = c.service.domains.named(domain);
  const link = c.service.shortUrl(code, typeof named === 'string' ? named : null);
  return ok({ visits: { data: events.map((e) => visitJson(e, link)), pagination: pagination(params.page, params.itemsPerPage, total, events.length) } });
}

export async function deleteVisits(c: ShlinkContext, ctx: Ctx): Promise<Answer> {
  const code = ctx.params['code']!;
  const deleted = await c.service.deleteVisits(code, domainParam(ctx));
  return deleted.ok ? ok({ deletedVisits: deleted.deleted }) : failed(deleted, code);
}

/**
 * Every live link's visits since 1970 (the stats of every link, in months), and the orphan visits
 * kept (docs/analytics.md). An editor's are those of its own links, a key for one domain's those
 * of that domain's, and no orphan visit: none is their own.
 */
export async function overview(c: ShlinkContext, who: Principal): Promise<Answer> {
  if (narrowed(who)) {
    const own = await listedTotals(c.service, who);
    if ('ok' in own) return failed(own, '');
    return ok({ visits: { nonOrphanVisits: summary(own.visits, own.bots), orphanVisits: summary(0, 0) } });
  }
  const stats = await c.service.stats(null, { from: 0, interval: 'month', bots: 'include' });
  if (!stats.ok)
    return stats.error === 'unavailable' ? unavailable(stats.detail) : plainProblem(500, 'Internal Server Error', 'the visit totals could not be counted');
  const orphans = await c.service.orphanCounts(0, Number.MAX_SAFE_INTEGER);
  if ('error' in orphans) return unavailable(orphans.detail);
  return ok({ visits: { nonOrphanVisits: summary(stats.stats.visit_count, stats.stats.bots), orphanVisits: summary(orphans.total, orphans.bots) } });
}

/** The tags, or their stats: `searchTerm`, `orderBy` (`tag`, counts), `page`, `itemsPerPage` (default all). */
export async function tags(c: ShlinkContext, ctx: Ctx, withStats: boolean, who: Principal): Promise<Answer> {
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
  const table = await tagTable(c.service, withStats, who);
  if (!Array.isArray(table)) return failed(table, '');
  const rows = table.filter((t) => t.tag.toLowerCase().includes(search));
  rows.sort((a, b) => (dir === 'ASC' ? 1 : -1) * compare(a, b));
  const [from, to] = pageBounds(params.page, params.itemsPerPage, rows.length);
  const page = rows.slice(from, to);
  return ok({
    tags: { data: withStats ? page : page.map((t) => t.tag), pagination: pagination(params.page, params.itemsPerPage, rows.length, page.length) },
  });
}
