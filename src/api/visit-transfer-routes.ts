/**
 * `GET /api/visits/export` and `POST /api/visits/import` (docs/analytics.md, moving history): the
 * visit events of every link out and back in, on the machinery of `/api/export` and `/api/import`
 * (`transfer-routes.ts`): the same keys and roles, streaming, limits and failure rules. Their
 * OpenAPI documentation is `visit-transfer-openapi.ts`.
 */
import { HttpError } from '../errors.ts';
import { domainScope } from '../links/domains.ts';
import { Refusal } from '../links/refusal.ts';
import type { Ctx } from '../http/context.ts';
import type { Responder } from '../http/respond.ts';
import type { Service } from '../links/service.ts';
import { ownLinksOnly, type Principal } from '../links/access.ts';
import type { Deprecations } from '../published/deprecations.ts';
import { EXPORT_FORMATS, pacedPieces, type ExportFormat } from '../transfer/export.ts';
import type { Transfer } from '../transfer/transfer.ts';
import { parseVisitExportFilter, visitExportFileName } from '../transfer/visit-transfer.ts';
import { adminKeyCheck } from './admin-key.ts';
import type { ApiRoute } from './route-types.ts';
import { importHandler, UNBUILT_TRANSFER } from './transfer-routes.ts';
import { VISIT_EXPORT_DOC, VISIT_IMPORT_DOC } from './visit-transfer-openapi.ts';

export interface VisitTransferRouteDeps {
  service: Pick<Service, 'keys' | 'mayTouch' | 'domains'>;
  reply: Responder;
  deprecations: Deprecations;
  /** Absent in a table built only to be read: the routes then fail with a 500. */
  transfer: Transfer | undefined;
  /** The public address: its path prefixes the resume of a failed import. */
  baseUrl: string;
}

export function visitTransferRoutes({ service, reply, deprecations, transfer: given, baseUrl }: VisitTransferRouteDeps): ApiRoute[] {
  const transfer = given ?? UNBUILT_TRANSFER;
  const { withKey } = adminKeyCheck(service, deprecations);
  const importPath = `${new URL(baseUrl).pathname.replace(/\/+$/, '')}/api/visits/import`;

  async function exportVisits(ctx: Ctx, notice: readonly string[], principal: Principal): Promise<void> {
    const query = ctx.query();
    const asked = query.get('format') ?? 'jsonl';
    if (asked !== 'jsonl' && asked !== 'csv') throw new HttpError(400, 'format must be jsonl or csv');
    const format: ExportFormat = asked;
    const filter = parseVisitExportFilter(
      { code: query.get('code'), domain: query.get('domain'), from: query.get('from'), to: query.get('to'), bots: query.get('bots') },
      service.domains,
    );
    if (typeof filter === 'string') throw new HttpError(400, filter);
    const name = visitExportFileName(format, transfer.now());
    // An editor's export holds the visits of its own links; another author's code is as unknown.
    // A key for one domain exports the visits of that domain's links (docs/security.md).
    const domain = domainScope(service.domains.named, undefined, principal);
    if (domain instanceof Refusal) throw new HttpError(400, domain.detail);
    const source = transfer.exportVisits(format, { ...filter, author: ownLinksOnly(principal) }, domain);
    try {
      // As the links export: a store that cannot be read is a 503 before the head goes out, and the
      // pacer writes a piece only once the client took the previous ones (memory flat at 10M events).
      const first = await source.next();
      await reply.stream(ctx.res, 200, EXPORT_FORMATS[format].type, pacedPieces(source, first), [
        'Content-Disposition',
        `attachment; filename="${name}"`,
        ...notice,
      ]);
    } finally {
      await source.return(undefined);
    }
  }

  const importVisits = importHandler(reply, importPath, (upload, format, fromLine) => transfer.importVisits(upload, format, fromLine));

  return [
    {
      path: '/api/visits/export',
      methods: { GET: withKey('list', exportVisits) },
      doc: VISIT_EXPORT_DOC,
    },
    {
      path: '/api/visits/import',
      methods: { POST: withKey('import', importVisits) },
      doc: VISIT_IMPORT_DOC,
    },
  ];
}
