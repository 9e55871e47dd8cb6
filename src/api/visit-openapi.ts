/**
 * The OpenAPI documentation of `visit-routes.ts` (docs/analytics.md): the stats of every link and
 * of one, and a link's visits, one `RouteDoc` per route, from which `published/openapi.ts` builds
 * the document. Data, kept apart from the handlers as `routes-openapi.ts` is for `routes.ts`.
 */
import { DOMAIN } from './routes-openapi.ts';
import { DEFAULT_VISIT_PAGE, MAX_VISIT_PAGE } from '../links/visits.ts';
import { json, ref, type OpenApiObject } from '../published/openapi-parts.ts';
import type { RouteDoc } from '../published/openapi.ts';
import { ALL_STATS_ORPHANS_SCHEMA, DELETED_VISITS_SCHEMA, LINK_STATS_SCHEMA, ORPHAN_LIST_SCHEMA, VISIT_LIST_SCHEMA } from '../published/visit-schemas.ts';

const query = (name: string, description: string, schema: OpenApiObject = { type: 'string' }): OpenApiObject => ({ name, in: 'query', description, schema });

const FROM = query('from', 'Start of the range: Unix seconds or ISO 8601 (a time without an offset, or a date alone, is read in tz).');
const TO = query('to', 'End of the range (excluded): Unix seconds or ISO 8601, like from.');
const TZ = query('tz', 'An IANA time zone (default UTC): the zone of the buckets and of ISO times without an offset.');
const BOTS = query('bots', 'exclude (default): leave bot visits out; include: count them too; only: count only them.');
const RANGE_PARAMS = [
  query(
    'from',
    'Start of the range: Unix seconds or ISO 8601 (a time without an offset, or a date alone, is read in tz); default 30 days before to. Rounded down to a bucket edge.',
  ),
  query('to', 'End of the range (excluded): Unix seconds or ISO 8601; default now. Rounded up to a bucket edge.'),
  query('interval', 'hour, day, week (from Monday) or month; default hour up to 2 days, day up to 92 days, else month. At most 1,000 buckets.'),
  TZ,
  BOTS,
];

const STATS_DESCRIPTION =
  'Buckets follow the wall clock of tz (a Berlin day has 23, 24 or 25 hours); from and to are echoed as the rounded edges, in Unix seconds. ' +
  "visits counts the range's events that pass bots; bots counts the bot events whatever the filter; unique_visitors counts distinct (UTC day, visitor id) pairs, " +
  'so a total is not the sum of its series. The key is checked first (403), then the parameters (400), then the code (404).';

export const ALL_STATS_DOC: RouteDoc = {
  GET: {
    operationId: 'getAllStats',
    summary: 'Visits of every live link in a range',
    description:
      'The stats of every live link together (visit_count summed), plus links: the 10 with the most visits in the range, and orphan_visits: the GETs no link answered in the range that pass bots. ' +
      `A viewer or admin key only: these totals count every author's visits, so an editor key reads the stats of each of its links instead. ${STATS_DESCRIPTION}`,
    tag: 'admin',
    access: 'admin',
    parameters: RANGE_PARAMS,
    responses: {
      200: json('The stats. Deprecation and Link only when the key came from api_key.', ALL_STATS_ORPHANS_SCHEMA, ['Deprecation', 'Link']),
      400: ref('responses', 'BadRequest'),
    },
  },
};

export const LINK_STATS_DOC: RouteDoc = {
  GET: {
    operationId: 'getUrlStats',
    summary: "A live link's visits in a range",
    description: STATS_DESCRIPTION,
    tag: 'admin',
    access: 'admin',
    parameters: [...RANGE_PARAMS, DOMAIN],
    responses: {
      200: json('The stats. Deprecation and Link only when the key came from api_key.', LINK_STATS_SCHEMA, ['Deprecation', 'Link']),
      400: ref('responses', 'BadRequest'),
      404: ref('responses', 'NotFound'),
    },
  },
};

export const VISITS_DOC: RouteDoc = {
  GET: {
    operationId: 'listUrlVisits',
    summary: "A live link's visits, newest first",
    description:
      'Each visit is its time, referrer host, country, browser, os, device and bot flag (never the visitor id), newest first (by time, then arrival). ' +
      'from and to (not rounded; default: every visit) and bots filter them; X-Total-Count counts the visits the filter keeps, all pages together.',
    tag: 'admin',
    access: 'admin',
    parameters: [
      query('limit', `Page size, 1–${MAX_VISIT_PAGE} (default ${DEFAULT_VISIT_PAGE}).`, { type: 'integer', minimum: 1, maximum: MAX_VISIT_PAGE }),
      ref('parameters', 'offset'),
      FROM,
      TO,
      TZ,
      BOTS,
      DOMAIN,
    ],
    responses: {
      200: json('A page of visits. Deprecation and Link only when the key came from api_key.', VISIT_LIST_SCHEMA, ['X-Total-Count', 'Deprecation', 'Link']),
      400: ref('responses', 'BadRequest'),
      404: ref('responses', 'NotFound'),
    },
  },
  DELETE: {
    operationId: 'deleteUrlVisits',
    summary: "Remove a live link's visits",
    description:
      'Removes every event of the link and sets visit_count and untracked_visits to 0, so a link with max_visits can be visited again. On disk before the answer.',
    tag: 'admin',
    access: 'admin',
    parameters: [DOMAIN],
    responses: {
      200: json('Removed. Deprecation and Link only when the key came from api_key.', DELETED_VISITS_SCHEMA, ['Deprecation', 'Link']),
      400: ref('responses', 'BadRequest'),
      404: ref('responses', 'NotFound'),
      503: ref('responses', 'Unavailable'),
    },
  },
};

export const ORPHAN_VISITS_DOC: RouteDoc = {
  GET: {
    operationId: 'listOrphanVisits',
    summary: 'The orphan visits, newest first',
    description:
      'A GET no link answered (docs/analytics.md): GET / of a domain where the UI is not served (base_url), an unknown code (invalid_short_url), an expired or used-up link (expired); ' +
      'recorded with VISIT_TRACKING=events, each with the fields of a visit, its type and the domain it was sent to, never the path asked for. ' +
      'from and to (default: every one) and bots (default exclude) filter them; X-Total-Count counts those the filter keeps. A viewer or admin key.',
    tag: 'admin',
    access: 'admin',
    parameters: [
      query('limit', `Page size, 1–${MAX_VISIT_PAGE} (default ${DEFAULT_VISIT_PAGE}).`, { type: 'integer', minimum: 1, maximum: MAX_VISIT_PAGE }),
      ref('parameters', 'offset'),
      FROM,
      TO,
      TZ,
      BOTS,
    ],
    responses: {
      200: json('A page of orphan visits. Deprecation and Link only when the key came from api_key.', ORPHAN_LIST_SCHEMA, [
        'X-Total-Count',
        'Deprecation',
        'Link',
      ]),
      400: ref('responses', 'BadRequest'),
      503: ref('responses', 'Unavailable'),
    },
  },
};
