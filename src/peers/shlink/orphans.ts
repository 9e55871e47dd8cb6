/**
 * Shlink's orphan visits (docs/compat.md): `GET /rest/v3/visits/orphan`, in Shlink's `Visit` shape
 * with its `type`. Shlink has no type of its own for an expired or used-up link (it counts it an
 * invalid short URL), and this service keeps no path asked for: `visitedUrl` is where the
 * domain's short URLs start.
 */
import type { Ctx } from '../../http/context.ts';
import type { Service } from '../../links/service.ts';
import { failed, ok, type Answer } from './answers.ts';
import { isProblem, parseVisitParams } from './params.ts';
import { pageBounds, pagination, visitJson } from './shapes.ts';

export async function orphanVisits(service: Service, ctx: Ctx): Promise<Answer> {
  const params = parseVisitParams(ctx.query());
  if (isProblem(params)) return params;
  const filter = { from: params.from, to: params.to, bots: params.excludeBots ? 'exclude' : 'include' } as const;
  const first = params.itemsPerPage === -1 ? 0 : (params.page - 1) * params.itemsPerPage;
  // One read of the page (Shlink's clients ask for at most a few thousand at once).
  const got = await service.orphanVisits(filter, { limit: params.itemsPerPage === -1 ? 1000 : Math.min(params.itemsPerPage, 1000), offset: first });
  if (!got.ok) return failed(got, '');
  const [from, to] = pageBounds(params.page, params.itemsPerPage, got.total);
  const visits = got.visits.slice(0, to - from);
  return ok({
    visits: {
      data: visits.map((v) => ({ ...visitJson(v, `${service.domains.origin(v.domain)}/`), type: v.type === 'base_url' ? 'base_url' : 'invalid_short_url' })),
      pagination: pagination(params.page, params.itemsPerPage, got.total, visits.length),
    },
  });
}
