/**
 * The OpenAPI documentation of `visit-transfer-routes.ts` (docs/analytics.md, moving history): the
 * visits' export and import, one `RouteDoc` per route, from which `published/openapi.ts` builds the
 * document. Data, kept apart from the handlers as `routes-openapi.ts` is for `routes.ts`.
 */
import { JSON_TYPE } from '../http/respond.ts';
import { body, json, ref } from '../published/openapi-parts.ts';
import type { RouteDoc } from '../published/openapi.ts';
import { VISIT_COLUMNS } from '../transfer/visit-rows.ts';
import { IMPORT_FAILED, IMPORT_REPORT } from './transfer-routes.ts';

const instant = (name: string, edge: string) => ({
  name,
  in: 'query' as const,
  description: `Unix seconds or ISO 8601 (a time without an offset, or a date alone, is UTC): events ${edge}.`,
  schema: { type: 'string' },
});

export const VISIT_EXPORT_DOC: RouteDoc = {
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
      {
        name: 'domain',
        in: 'query',
        description: "The domain of code: one of the service's hosts (absent, default or the default host: the default domain); another is 400.",
        schema: { type: 'string' },
      },
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
};

export const VISIT_IMPORT_DOC: RouteDoc = {
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
};
