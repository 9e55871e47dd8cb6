/**
 * `GET /api/export` and `POST /api/import` (docs/api.md, export and import), as routes of the
 * table with their OpenAPI documentation. Both need an API key, checked before anything else: the
 * export one whose role may list (an editor's holds its own links), the import an admin's.
 */
import { HttpError } from '../errors.ts';
import { domainScope } from '../links/domains.ts';
import { Refusal } from '../links/refusal.ts';
import { IMPORT_BODY_LIMIT, mediaType, streamBody } from '../http/body.ts';
import type { Ctx } from '../http/context.ts';
import { JSON_TYPE, type Responder } from '../http/respond.ts';
import type { Deprecations } from '../published/deprecations.ts';
import { body, json, ref } from '../published/openapi-parts.ts';
import { EXPORT_FORMATS, exportFileName, pacedPieces, type ExportFormat } from '../transfer/export.ts';
import { parseFromLine, type ImportResult } from '../transfer/import.ts';
import { ImportInputError, type ImportFormat } from '../transfer/sources.ts';
import type { Transfer } from '../transfer/transfer.ts';
import { adminKeyCheck } from './admin-key.ts';
import type { ApiRoute } from './route-types.ts';
import type { Service } from '../links/service.ts';
import { ownLinksOnly, type Principal } from '../links/access.ts';

export interface TransferRouteDeps {
  service: Pick<Service, 'keys' | 'mayTouch' | 'domains'>;
  reply: Responder;
  deprecations: Deprecations;
  /** Absent in a table built only to be read (documentation, tests): the routes then fail with a 500. */
  transfer: Transfer | undefined;
  /** The public address: its path prefixes the resume of a failed import. */
  baseUrl: string;
}

/** What `POST /api/import` reads, by media type. */
export const IMPORT_TYPES: Readonly<Record<string, ImportFormat>> = { 'application/x-ndjson': 'jsonl', 'text/csv': 'csv' };

export const IMPORT_REPORT = {
  type: 'object',
  properties: {
    imported: { type: 'integer', minimum: 0 },
    skipped: { type: 'integer', minimum: 0 },
    errors: {
      type: 'array',
      maxItems: 100,
      description: 'The first 100 skipped rows, by line.',
      items: {
        type: 'object',
        properties: { line: { type: 'integer', minimum: 1, description: 'The physical line of the row in the file.' }, detail: { type: 'string' } },
        required: ['line', 'detail'],
        additionalProperties: false,
      },
    },
  },
  required: ['imported', 'skipped', 'errors'],
  additionalProperties: false,
} as const;

export const IMPORT_FAILED = {
  type: 'object',
  properties: {
    detail: { type: 'string' },
    imported: { type: 'integer', minimum: 0, description: 'Rows stored (durable) before the failure.' },
    line: { type: 'integer', minimum: 1, description: 'The first row not stored: nothing from this line on was written.' },
    resume: {
      type: 'string',
      description: "The path (under the base URL's path) and query that import the same file from that line: /api/import?from_line=L.",
    },
  },
  required: ['detail', 'imported', 'line', 'resume'],
  additionalProperties: false,
} as const;

/** The transfer of a table built only to be read: every route fails with a 500. */
export const UNBUILT_TRANSFER: Transfer = {
  exportText: unbuilt,
  importLinks: unbuilt,
  exportVisits: unbuilt,
  importVisits: unbuilt,
  now: Date.now,
};

function unbuilt(): never {
  throw new Error('this route table was built without a store');
}

/**
 * The handler of an import route (`/api/import`, `/api/visits/import`): the content type, the line
 * to resume from, the run over the streamed upload, and its answer — the report, or a `503` naming
 * the line to resume from at `importPath`.
 */
export function importHandler(
  reply: Responder,
  importPath: string,
  run: (upload: AsyncIterable<Buffer | string>, format: ImportFormat, fromLine: number) => Promise<ImportResult>,
): (ctx: Ctx, notice: readonly string[]) => Promise<void> {
  return async function importing(ctx, notice) {
    const type = mediaType(ctx.req.headers['content-type']);
    // An own key only: `__proto__` or `constructor` is no import type.
    const format = Object.hasOwn(IMPORT_TYPES, type) ? IMPORT_TYPES[type] : undefined;
    if (format === undefined) {
      throw new HttpError(
        415,
        `${type ? `unsupported content type ${type}` : 'an import needs a Content-Type'}; send application/x-ndjson (JSON Lines) or text/csv`,
      );
    }
    const from = ctx.query().get('from_line');
    const fromLine = from === null ? 1 : parseFromLine(from);
    if (fromLine === undefined) throw new HttpError(400, 'from_line must be an integer of 1 or more (the line to resume the import from)');
    let result;
    try {
      result = await run(streamBody(ctx.req, IMPORT_BODY_LIMIT), format, fromLine);
    } catch (err) {
      if (err instanceof ImportInputError) throw new HttpError(400, err.message);
      throw err;
    }
    if (result.ok) {
      const { imported, skipped, errors } = result;
      return reply.json(ctx.res, 200, { imported, skipped, errors }, notice);
    }
    // The rest of the upload is left unread: the connection closes after this answer. The resume
    // names no key (an api_key in the query stays out of it): the client sends its own again.
    const { detail, imported, line } = result;
    reply.json(ctx.res, 503, { detail, imported, line, resume: `${importPath}?from_line=${line}` }, ['Connection', 'close', ...notice]);
  };
}

export function transferRoutes({ service, reply, deprecations, transfer: given, baseUrl }: TransferRouteDeps): ApiRoute[] {
  const transfer = given ?? UNBUILT_TRANSFER;
  const { withKey } = adminKeyCheck(service, deprecations);
  // The route as the client addresses it: behind the base URL's path, whatever a proxy makes of it.
  const importPath = `${new URL(baseUrl).pathname.replace(/\/+$/, '')}/api/import`;

  async function exportLinks(ctx: Ctx, notice: readonly string[], principal: Principal): Promise<void> {
    const asked = ctx.query().get('format') ?? 'jsonl';
    if (asked !== 'jsonl' && asked !== 'csv') throw new HttpError(400, 'format must be jsonl or csv');
    const format: ExportFormat = asked;
    const name = exportFileName(format, transfer.now());
    // A key for one domain exports that domain's links (docs/security.md).
    const domain = domainScope(service.domains.named, undefined, principal);
    if (domain instanceof Refusal) throw new HttpError(400, domain.detail);
    const source = transfer.exportText(format, ownLinksOnly(principal), domain);
    try {
      // The first piece is read before the head goes out: a store that cannot be read (a database
      // that is down) is then a 503 like the list's, and only a failure later cuts the answer.
      const first = await source.next();
      // The pacer writes a piece only once the client took the previous ones (res.write's false is
      // waited out): a slow reader holds one piece of the export, not the export.
      await reply.stream(ctx.res, 200, EXPORT_FORMATS[format].type, pacedPieces(source, first), [
        'Content-Disposition',
        `attachment; filename="${name}"`,
        ...notice,
      ]);
    } finally {
      // A client that went away leaves the export unfinished: end it, which releases its snapshot.
      await source.return(undefined);
    }
  }

  const importLinks = importHandler(reply, importPath, (upload, format, fromLine) => transfer.importLinks(upload, format, fromLine));

  return [
    {
      path: '/api/export',
      methods: { GET: withKey('list', exportLinks) },
      doc: {
        GET: {
          operationId: 'exportUrls',
          summary: 'Export the live links, oldest first',
          description:
            'A viewer or admin key exports every live link, an editor key the links it made. ' +
            'JSON Lines (one record per line), or with format=csv RFC 4180 CSV with the header short_code,short_url,original_url,created_at,visit_count,retention_days,max_visits,title,tags,author,domain,rules,forward_query,valid_since,valid_until,fallback_url,password_hash ' +
            '(an empty cell for none; tags one cell, joined with commas; rules as JSON text; a password only as its hash). Streamed; Content-Disposition names the file urls-YYYY-MM-DD.jsonl or .csv.',
          tag: 'admin',
          access: 'admin',
          parameters: [{ name: 'format', in: 'query', description: 'jsonl (the default) or csv.', schema: { type: 'string', enum: ['jsonl', 'csv'] } }],
          responses: {
            200: {
              description: 'The records. Deprecation and Link only when the key came from api_key.',
              headers: {
                'Content-Disposition': { description: 'attachment; filename="urls-YYYY-MM-DD.jsonl" (or .csv).', schema: { type: 'string' } },
                Deprecation: ref('headers', 'Deprecation'),
                Link: ref('headers', 'Link'),
              },
              content: {
                'application/x-ndjson': { schema: { type: 'string', description: 'One Record (JSON) per line.' } },
                'text/csv': { schema: { type: 'string' } },
              },
            },
            400: ref('responses', 'BadRequest'),
          },
        },
      },
    },
    {
      path: '/api/import',
      methods: { POST: withKey('import', importLinks) },
      doc: {
        POST: {
          operationId: 'importUrls',
          summary: 'Import links from JSON Lines or CSV',
          description:
            'Streamed, up to 256 MiB. CSV columns are found by header name, case-insensitively: url ← original_url, url, long_url, longUrl, Long URL; ' +
            'code ← short_code, code, shortCode, Short code, keyword; created ← created_at, createdAt, timestamp, date_created (Unix seconds, ISO 8601, ' +
            'or YYYY-MM-DD HH:MM:SS as UTC); visits ← visit_count, visits, clicks; plus retention_days, max_visits, title, tags (in CSV one cell, the tags separated by commas) ' +
            'and author (a key id, kept as given; empty is none); other columns are ignored. ' +
            'Rows are checked like a create and stored in file order; a row without a code gets a generated one; invalid rows, taken codes and ' +
            'already expired rows are skipped and reported by line. Answered once every stored row is durable. Needs an admin key.',
          tag: 'admin',
          access: 'admin',
          parameters: [
            {
              name: 'from_line',
              in: 'query',
              description:
                'Import only the rows that start on this line or later (the line a 503 named): the rows before it are neither checked nor reported. A CSV header is read wherever it is.',
              schema: { type: 'integer', minimum: 1 },
            },
          ],
          requestBody: {
            required: true,
            content: {
              'application/x-ndjson': { schema: { type: 'string', description: 'One record (JSON object) per line.' } },
              'text/csv': { schema: { type: 'string', description: 'A header row, then one link per row.' } },
            },
          },
          responses: {
            200: json('The import report. Deprecation and Link only when the key came from api_key.', IMPORT_REPORT, ['Deprecation', 'Link']),
            400: ref('responses', 'BadRequest'),
            413: json('The body is over 256 MiB. The connection is closed.', 'Error'),
            415: ref('responses', 'UnsupportedMediaType'),
            503: body(
              'The store failed part-way: every row before line that was reported imported is durable, nothing from line on was written; importing the same file again with from_line=line (the resume) finishes the job without storing a row twice.',
              JSON_TYPE,
              IMPORT_FAILED,
            ),
          },
        },
      },
    },
  ];
}
