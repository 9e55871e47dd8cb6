/**
 * The query parameters of Shlink's surface in the OpenAPI document (docs/compat.md), as `params.ts`
 * reads them: the short URL list's, a visit list's and the tags'. The ones several operations share
 * are components (`PARAMETERS`, named `Shlink…`; the catch-all's path parameter `shlink_path`).
 */
import { MAX_SEARCH_LENGTH, MAX_TAG_LENGTH, MAX_TAGS } from '../../links/validate.ts';
import { ref, type OpenApiObject } from '../../published/openapi-parts.ts';
import { ORDER_FIELDS } from './params.ts';

const query = (name: string, schema: OpenApiObject, description: string, extra: OpenApiObject = {}): OpenApiObject => ({
  name,
  in: 'query',
  description,
  schema,
  ...extra,
});

export const PARAMETERS: Record<string, OpenApiObject> = {
  shlink_path: {
    name: 'shlink_path',
    in: 'path',
    required: true,
    description: 'Any path under /rest/ no route above serves: one segment or more.',
    schema: { type: 'string' },
  },
  ShlinkSearchTerm: query(
    'searchTerm',
    { type: 'string', maxLength: MAX_SEARCH_LENGTH },
    `Keep what contains it, case-insensitively (short URLs: the code, the long URL or the title; tags: the tag); empty: no search. At most ${MAX_SEARCH_LENGTH} characters, by the REST list's rule.`,
  ),
  ShlinkStartDate: query('startDate', { type: 'string' }, 'From this ISO 8601 date or time on, inclusive (UTC without an offset).'),
  ShlinkEndDate: query('endDate', { type: 'string' }, 'Up to this ISO 8601 date or time, inclusive (UTC without an offset).'),
  ShlinkPageOrFirst: query('page', { type: 'integer', default: 1 }, 'The page, from 1; below 1 or absent: the first.'),
  ShlinkItemsOrAll: query('itemsPerPage', { type: 'integer' }, 'Items on a page; below 1 or absent: every item on one page.'),
};

const param = (name: string): OpenApiObject => ref('parameters', name);

/** A repeatable list parameter, as PHP reads one: `tags[]=a&tags[]=b` (or `tags=a`). */
const list = (name: string, description: string): OpenApiObject =>
  query(
    `${name}[]`,
    { type: 'array', items: { type: 'string' } },
    `${description} Also ${name}=…. Each trimmed and then 1–${MAX_TAG_LENGTH} characters, at most ${MAX_TAGS}.`,
    {
      style: 'form',
      explode: true,
    },
  );

const MODE = { type: 'string', enum: ['any', 'all'], default: 'any' };

export const LIST_PARAMS = [
  query('page', { type: 'integer', minimum: 1, default: 1 }, 'The page, from 1.'),
  query('itemsPerPage', { type: 'integer', minimum: -1, default: 10 }, 'Items on a page, 1 or more; -1: every item on one page. 0 is invalid-data.'),
  param('ShlinkSearchTerm'),
  list('tags', 'Keep the links having these tags (tagsMode).'),
  query('tagsMode', MODE, 'any: a link needs one of the tags; all: every one.'),
  list('excludeTags', 'Leave out the links having these tags (excludeTagsMode).'),
  query('excludeTagsMode', MODE, 'any: a link having one of them is left out; all: only one having every one.'),
  query(
    'orderBy',
    { type: 'string', pattern: `^(${ORDER_FIELDS.join('|')})(-(ASC|DESC))?$` },
    'A field, then -ASC (the default) or -DESC. Absent: newest first (dateCreated-DESC).',
  ),
  param('ShlinkStartDate'),
  param('ShlinkEndDate'),
  query('excludeMaxVisitsReached', { type: 'boolean' }, 'true: leave out the links whose visit limit is used up.'),
  query('domain', { type: 'string' }, "DEFAULT or this service's host; another domain lists nothing."),
  query(
    'excludePastValidUntil',
    { type: 'boolean' },
    'true: leave out the links past their validUntil (valid_until); a link past its retention is never listed.',
  ),
];

export const VISIT_PARAMS = [
  param('ShlinkPageOrFirst'),
  param('ShlinkItemsOrAll'),
  param('ShlinkStartDate'),
  param('ShlinkEndDate'),
  query('excludeBots', { type: 'string' }, 'Present, whatever its value: leave out the visits of bots.'),
];

/** `orderBy` of the tags: `fields`, then -ASC or -DESC. */
export const tagParams = (fields: readonly string[]): OpenApiObject[] => [
  param('ShlinkSearchTerm'),
  query('orderBy', { type: 'string', pattern: `^(${fields.join('|')})(-(ASC|DESC))?$`, default: 'tag-ASC' }, 'A field, then -ASC (the default) or -DESC.'),
  param('ShlinkPageOrFirst'),
  param('ShlinkItemsOrAll'),
];
