/**
 * The visit routes (docs/analytics.md): `GET /api/urls/<code>/stats`, `GET /api/stats`, and
 * `GET`/`DELETE /api/urls/<code>/visits`; their OpenAPI documentation is `visit-openapi.ts`.
 * Like the list they need an API key whose role allows them (`/api/stats`, the instance's totals,
 * is no editor's), checked first (403 before 400 before 404); the work is the service's
 * (`links/visits.ts`), which reads the range as `visits/range.ts` decides.
 */
import type { Ctx } from '../http/context.ts';
import type { Responder } from '../http/respond.ts';
import type { Service } from '../links/service.ts';
import type { Deprecations } from '../published/deprecations.ts';
import type { RangeParams } from '../visits/range.ts';
import { adminKeyCheck } from './admin-key.ts';
import { failureError } from './outcomes.ts';
import { domainParam, type ApiRoute } from './route-types.ts';
import { ALL_STATS_DOC, LINK_STATS_DOC, ORPHAN_VISITS_DOC, VISITS_DOC } from './visit-openapi.ts';

export interface VisitRouteDeps {
  service: Pick<Service, 'keys' | 'mayTouch' | 'stats' | 'visits' | 'deleteVisits' | 'orphanVisits' | 'orphanCounts'>;
  reply: Responder;
  deprecations: Deprecations;
}

/** The range parameters of a query; absent ones stay undefined (their defaults are the service's). */
function rangeParams(ctx: Ctx): RangeParams {
  const q = ctx.query();
  const get = (name: string): string | undefined => q.get(name) ?? undefined;
  return { from: get('from'), to: get('to'), interval: get('interval'), tz: get('tz'), bots: get('bots') };
}

export function visitRoutes({ service, reply, deprecations }: VisitRouteDeps): ApiRoute[] {
  const { withKey } = adminKeyCheck(service, deprecations);

  return [
    {
      path: '/api/stats',
      methods: {
        GET: withKey('read-all', async (ctx: Ctx, notice) => {
          const params = rangeParams(ctx);
          const outcome = await service.stats(null, params);
          if (!outcome.ok) throw failureError(outcome);
          // Counted apart: no link's, so in none of the links' figures (docs/analytics.md, orphan visits).
          const orphans = await service.orphanCounts(outcome.stats.from, outcome.stats.to);
          if ('error' in orphans) throw failureError(orphans);
          const bots = params.bots ?? 'exclude';
          const orphanVisits = bots === 'only' ? orphans.bots : bots === 'include' ? orphans.total : orphans.total - orphans.bots;
          reply.json(ctx.res, 200, { ...outcome.stats, orphan_visits: orphanVisits }, notice);
        }),
      },
      doc: ALL_STATS_DOC,
    },
    {
      path: '/api/visits/orphan',
      methods: {
        GET: withKey('read-all', async (ctx: Ctx, notice) => {
          const query = ctx.query();
          const paging = { limit: query.get('limit') ?? undefined, offset: query.get('offset') ?? undefined };
          const { interval: _interval, ...filter } = rangeParams(ctx);
          const outcome = await service.orphanVisits(filter, paging);
          if (!outcome.ok) throw failureError(outcome);
          reply.json(ctx.res, 200, { count: outcome.visits.length, visits: outcome.visits }, ['X-Total-Count', String(outcome.total), ...notice]);
        }),
      },
      doc: ORPHAN_VISITS_DOC,
    },
    {
      path: '/api/urls/:code/stats',
      methods: {
        GET: withKey('read', async (ctx: Ctx, notice) => {
          const outcome = await service.stats(ctx.params['code']!, rangeParams(ctx), domainParam(ctx));
          if (!outcome.ok) throw failureError(outcome);
          reply.json(ctx.res, 200, outcome.stats, notice);
        }),
      },
      doc: LINK_STATS_DOC,
    },
    {
      path: '/api/urls/:code/visits',
      methods: {
        GET: withKey('read', async (ctx: Ctx, notice) => {
          const query = ctx.query();
          const paging = { limit: query.get('limit') ?? undefined, offset: query.get('offset') ?? undefined };
          const { interval: _interval, ...filter } = rangeParams(ctx);
          const outcome = await service.visits(ctx.params['code']!, filter, paging, domainParam(ctx));
          if (!outcome.ok) throw failureError(outcome);
          reply.json(ctx.res, 200, { count: outcome.visits.length, visits: outcome.visits }, ['X-Total-Count', String(outcome.total), ...notice]);
        }),
        DELETE: withKey('edit', async (ctx: Ctx, notice) => {
          const outcome = await service.deleteVisits(ctx.params['code']!, domainParam(ctx));
          if (!outcome.ok) throw failureError(outcome);
          reply.json(ctx.res, 200, { deleted_visits: outcome.deleted }, notice);
        }),
      },
      doc: VISITS_DOC,
    },
  ];
}
