/**
 * `GET /api/visits/export` and `POST /api/visits/import` (docs/analytics.md, moving history): the
 * visit events of every link out and back in, on the machinery of `/api/export` and `/api/import`
 * (`transfer-routes.ts`): the same keys and roles, streaming, limits and failure rules.
 */
import { HttpError } from '../errors.ts';
import type { Ctx } from '../http/context.ts';
import { JSON_TYPE, type Responder } from '../http/respond.ts';
import type { Service } from '../links/service.ts';
import { ownLinksOnly, type Principal } from '../links/access.ts';
import type { Deprecations } from '../published/deprecations.ts';
import { body, json, ref } from '../published/openapi-parts.ts';
import { EXPORT_FORMATS, pacedPieces, type ExportFormat } from '../transfer/export.ts';
import type { Transfer } from '../transfer/transfer.ts';
import { VISIT_COLUMNS } from '../transfer/visit-rows.ts';
import { parseVisitExportFilter, visitExportFileName } from '../transfer/visit-transfer.ts';
import { adminKeyCheck } from './admin-key.ts';
import type { ApiRoute } from './route-types.ts';
import { IMPORT_FAILED, IMPORT_REPORT, importHandler, UNBUILT_TRANSFER } from './transfer-routes.ts';

export interface VisitTransferRouteDeps {
  service: Pick<Service, 'keys' | 'mayTouch'>;
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
    const filter = parseVisitExportFilter({ code: query.get('code'), from: query.get('from'), to: query.get('to'), bots: query.get('bots') });
    if (typeof filter === 'string') throw new HttpError(400, filter);
    const name = visitExportFileName(format, transfer.now());
    // An editor's export holds the visits of its own links; another author's code is as unknown.
    const source = transfer.exportVisits(format, { ...filter, author: ownLinksOnly(principal) });
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

  const instant = (name: string, edge: string) => ({
    name,
    in: 'query' as const,
    description: `Unix seconds or ISO 8601 (a time without an offset, or a date alone, is UTC): events ${edge}.`,
    schema: { type: 'string' },
  });

  return [
    {
      path: '/api/visits/export',
      methods: { GET: withKey('list', exportVisits) },
      doc: {
        GET: {
          operationId: 'exportVisits',
          summary: 'Export the visit events of the live links, oldest first',
          description:
            "A viewer or admin key exports the events of every live link, an editor key those of the links it made (another author's code exports nothing, as an unknown one). " +
            `JSON Lines (one event per line, with its short_code), or with format=csv RFC 4180 CSV with the header ${VISIT_COLUMNS.join(',')} ` +
            '(null is an empty field, bot is true or false). Streamed; Content-Disposition names the file visits-YYYY-MM-DD.jsonl or .csv. ' +
            'The visitor id is never exported. POST /api/visits/import takes the file back.',
          tag: 'admin',
          access: 'admin',
          parameters: [
            { name: 'format', in: 'query', description: 'jsonl (the default) or csv.', schema: { type: 'string', enum: ['jsonl', 'csv'] } },
            { name: 'code', in: 'query', description: 'Only the events of this link.', schema: { type: 'string' } },
            instant('from', 'at or after it'),
            instant('to', 'before it'),
            {
              name: 'bots',
              in: 'query',
              description: 'include (the default), exclude or only.',
              schema: { type: 'string', enum: ['include', 'exclude', 'only'] },
            },
          ],
          responses: {
            200: {
              description: 'The events. Deprecation and Link only when the key came from api_key.',
              headers: {
                'Content-Disposition': { description: 'attachment; filename="visits-YYYY-MM-DD.jsonl" (or .csv).', schema: { type: 'string' } },
                Deprecation: ref('headers', 'Deprecation'),
                Link: ref('headers', 'Link'),
              },
              content: {
                'application/x-ndjson': {
                  schema: {
                    type: 'string',
                    description: `One event per line: a JSON object of ${VISIT_COLUMNS.join(', ')} (time in Unix seconds; referrer, country, browser, os, device null when unknown).`,
                  },
                },
                'text/csv': { schema: { type: 'string' } },
              },
            },
            400: ref('responses', 'BadRequest'),
          },
        },
      },
    },
    {
      path: '/api/visits/import',
      methods: { POST: withKey('import', importVisits) },
      doc: {
        POST: {
          operationId: 'importVisits',
          summary: 'Import visit events from a visits export',
          description:
            `Streamed, up to 256 MiB: JSON Lines, or CSV with a header naming at least short_code and time (columns ${VISIT_COLUMNS.join(', ')}, case-insensitive). ` +
            'time is Unix seconds or ISO 8601; referrer a host (lower-cased); country two letters; browser, os and device one of the recorded families; ' +
            "empty or absent is null (bot: false). Each event first turns one of its link's untracked visits into an event, and past them adds a visit. " +
            'Rows are recorded in file order; invalid rows and rows whose code has no live link are skipped and reported by line. Import the links first. Needs an admin key.',
          tag: 'admin',
          access: 'admin',
          parameters: [
            {
              name: 'from_line',
              in: 'query',
              description: 'Import only the rows that start on this line or later (the line a 503 named). A CSV header is read wherever it is.',
              schema: { type: 'integer', minimum: 1 },
            },
          ],
          requestBody: {
            required: true,
            content: {
              'application/x-ndjson': { schema: { type: 'string', description: 'One event (JSON object, as the export writes it) per line.' } },
              'text/csv': { schema: { type: 'string', description: 'A header row, then one event per row.' } },
            },
          },
          responses: {
            200: json('The import report. Deprecation and Link only when the key came from api_key.', IMPORT_REPORT, ['Deprecation', 'Link']),
            400: ref('responses', 'BadRequest'),
            413: json('The body is over 256 MiB. The connection is closed.', 'Error'),
            415: ref('responses', 'UnsupportedMediaType'),
            503: body(
              'The store failed part-way: every row before line that was reported imported is durable, nothing from line on was written; importing the same file again with from_line=line (the resume, /api/visits/import?from_line=L) finishes the job.',
              JSON_TYPE,
              IMPORT_FAILED,
            ),
          },
        },
      },
    },
  ];
}
