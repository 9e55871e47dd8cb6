/**
 * The MCP tools (docs/mcp.md) as a table: what each declares to clients, and a short `run` that calls
 * the same service operation as the REST route. Arguments reach `run` already validated against
 * `inputSchema`. A failure of the work itself (invalid URL, unknown code, bad key, expired link,
 * storage unavailable) is an ordinary result with `isError: true`, so the model can read it and
 * correct itself; it is never a protocol error.
 */
import { CODE_SCHEMA, LIST_SCHEMA, RECORD_SCHEMA } from '../published/schemas.ts';
import { RateLimitedCall } from './jsonrpc.ts';
import { MAX_LIMIT, MAX_RETENTION_DAYS, MAX_SEARCH_LENGTH, MAX_TAG_LENGTH, MAX_TAGS, MAX_TITLE_LENGTH, MAX_VISITS } from '../links/validate.ts';
import { LINK_STATS_SCHEMA } from '../published/visit-schemas.ts';
import { ROUTING_ARGS, routingArgs, SET_RULES } from './routing-tools.ts';
import { asRecord, failed, missing, structured, type Tool } from './tool-results.ts';

export type { Tool, ToolAnnotations, ToolCall, ToolResult } from './tool-results.ts';

/*
 * The input schemas say what JSON each argument is, and what the limits are in words, but hold no
 * rule of the service's (a length, a range): the service checks every value for every door, and a
 * refusal is an `isError` result with its reason, the same words as every other door's.
 */
const API_KEY = {
  type: 'string',
  description: 'An API key of this service whose role allows the tool, when the X-API-Key header carries none: a key of API_KEYS, or a stored key.',
} as const;
const CODE = { type: 'string', description: `${CODE_SCHEMA.description} The last path segment of a short URL.` } as const;
const DOMAIN = {
  type: 'string',
  description: "The link's domain: one of the service's hosts (DOMAINS), or absent (or default) for the default one, the host of its base URL.",
} as const;
const CLOSED = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const RETENTION = { type: 'integer' } as const;
const MAX_VISITS_ARG = { type: ['integer', 'null'] } as const;
const TITLE_ARG = { type: ['string', 'null'] } as const;
const TAGS_ARG = { type: 'array', items: { type: 'string' } } as const;
const TAG_RULES = `each trimmed, then 1–${MAX_TAG_LENGTH} characters without a comma; duplicates dropped, at most ${MAX_TAGS}`;

export const TOOLS: readonly Tool[] = [
  {
    name: 'shorten_url',
    title: 'Shorten a URL',
    description:
      'Create a short link for an absolute http or https URL. Returns the short URL as text and the new link as structured content. ' +
      'Every call creates a new code, even for a URL shortened before (lookup_url finds an existing one). ' +
      `retention_days (1–${MAX_RETENTION_DAYS}) makes the link expire after that many days; 0 or absent keeps it forever. ` +
      'code asks for a custom code instead of a generated one (fails with "code already in use" when a live link holds it); ' +
      'max_visits makes the link stop redirecting after that many visits (1 = a one-time link). ' +
      'title and tags label the link for people and for list_urls (q searches titles, tag filters by tags). ' +
      'rules, forward_query, valid_since, valid_until, fallback_url and password say where it sends each visitor (set_rules changes the rules later).',
    inputSchema: {
      type: 'object',
      properties: {
        url: { type: 'string', description: 'The absolute http(s) URL to shorten (no user:password@ part).' },
        retention_days: { ...RETENTION, description: `Lifetime in days, 0 to ${MAX_RETENTION_DAYS}; 0 or absent = forever.` },
        code: {
          type: 'string',
          description:
            "A custom code: letters A-Z a-z, digits, '-' and '_', within the service's code length limits, not a reserved word. Case-sensitive. Absent = a generated code.",
        },
        max_visits: { ...MAX_VISITS_ARG, description: `Counted visits allowed before the link answers 410, 1 to ${MAX_VISITS}; null or absent = unlimited.` },
        title: { ...TITLE_ARG, description: `A title for the link, at most ${MAX_TITLE_LENGTH} characters; null, empty or absent = none.` },
        tags: { ...TAGS_ARG, description: `Tags for the link (${TAG_RULES}); kept sorted.` },
        domain: { ...DOMAIN, description: `${DOMAIN.description} The code is unique on its domain.` },
        ...ROUTING_ARGS,
        api_key: {
          ...API_KEY,
          description: `${API_KEY.description} Needed only where the service asks for a key to create (CREATE_ACCESS=key); the link records a stored key as its author.`,
        },
      },
      required: ['url'],
      additionalProperties: false,
    },
    outputSchema: RECORD_SCHEMA,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    access: 'create',
    async run(args, service, { from, principal }) {
      const outcome = await service.shorten({
        url: args['url'],
        retentionDays: args['retention_days'],
        code: args['code'],
        maxVisits: args['max_visits'],
        title: args['title'],
        tags: args['tags'],
        from,
        author: principal?.id,
        keyDomain: principal?.domain,
        domain: args['domain'],
        routing: routingArgs(args),
      });
      if (!outcome.ok && outcome.error === 'rate_limited') throw new RateLimitedCall(outcome.detail, outcome.retryAfter);
      if (!outcome.ok) return failed(outcome.detail);
      return structured(asRecord(outcome.record), outcome.record.short_url);
    },
  },
  {
    name: 'get_url',
    title: 'Get a short link',
    description: "Get a short link's record by its code: the original URL, creation time (Unix seconds), visit count and retention.",
    inputSchema: { type: 'object', properties: { code: CODE, domain: DOMAIN }, required: ['code'], additionalProperties: false },
    outputSchema: RECORD_SCHEMA,
    annotations: CLOSED,
    async run(args, service) {
      const code = args['code'] as string;
      const outcome = await service.get(code, args['domain']);
      if (outcome.ok) return structured(asRecord(outcome.record));
      return outcome.error === 'not_found' ? missing(service, code, args['domain']) : failed(outcome.detail);
    },
  },
  {
    name: 'lookup_url',
    title: 'Find the short link of a URL',
    description:
      'Find the newest live short link whose original URL equals the given one. URLs are compared normalized ' +
      '(scheme and host lower-cased, default port dropped, spaces percent-encoded).',
    inputSchema: {
      type: 'object',
      properties: { url: { type: 'string', description: 'The original (long) URL.' } },
      required: ['url'],
      additionalProperties: false,
    },
    outputSchema: RECORD_SCHEMA,
    annotations: CLOSED,
    async run(args, service) {
      const outcome = await service.lookup(args['url']);
      if (outcome.ok) return structured(asRecord(outcome.record));
      return outcome.error === 'not_found' ? failed(`No live short link points to ${JSON.stringify(args['url'])}.`) : failed(outcome.detail);
    },
  },
  {
    name: 'list_urls',
    title: 'List short links',
    description:
      'List live short links, newest first. Needs a key whose role may list (viewer or admin; an editor sees the links it made). Page with limit (1–1000) and offset; without limit every link is returned. ' +
      'q keeps the links whose code, original URL or title contains it (case-insensitively); tag keeps those having every tag named (compared exactly). ' +
      'count is the number of links in this page, total the number of live links the filters keep.',
    inputSchema: {
      type: 'object',
      properties: {
        api_key: API_KEY,
        limit: { type: 'integer', description: `Page size, 1 to ${MAX_LIMIT}; absent = every link from offset on.` },
        offset: { type: 'integer', description: 'Links skipped first, 0 or more; absent = 0.' },
        q: {
          type: 'string',
          description: `Keep only the links whose code, original URL or title contains this text (1 to ${MAX_SEARCH_LENGTH} characters), case-insensitively.`,
        },
        tag: {
          type: 'array',
          items: { type: 'string' },
          description: 'Keep only the links having every one of these tags (compared exactly, case-sensitively).',
        },
        domain: {
          ...DOMAIN,
          description: "Keep only the links of this domain: one of the service's hosts, or default for the default one; absent = every domain's.",
        },
      },
      additionalProperties: false,
    },
    outputSchema: {
      ...LIST_SCHEMA,
      properties: { ...LIST_SCHEMA.properties, total: { type: 'integer', minimum: 0, description: 'Live links (kept by q and tag), all pages together.' } },
      required: [...LIST_SCHEMA.required, 'total'],
    },
    annotations: CLOSED,
    access: 'list',
    async run(args, service, { principal }) {
      // The arguments as typed; `tag`'s values are read as the REST list's `tag` parameters are
      // (commas separate tags), and the service checks every one of them.
      const listed = await service.list(
        {
          limit: args['limit'] as number | undefined,
          offset: args['offset'] as number | undefined,
          q: args['q'] as string | undefined,
          tags: args['tag'] as string[] | undefined,
          tagsAsText: true,
          domain: args['domain'],
        },
        principal,
      );
      if (!listed.ok) return failed(listed.detail);
      return structured({ count: listed.urls.length, total: listed.total, urls: listed.urls });
    },
  },
  {
    name: 'delete_url',
    title: 'Delete a short link',
    description:
      'Delete a short link by its code: the short URL stops redirecting at once. Needs a key whose role may edit (admin, or an editor on the links it made). Cannot be undone.',
    inputSchema: {
      type: 'object',
      properties: { code: CODE, domain: DOMAIN, api_key: API_KEY },
      required: ['code'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: { short_code: CODE_SCHEMA, deleted: { type: 'boolean', const: true } },
      required: ['short_code', 'deleted'],
      additionalProperties: false,
    },
    // Idempotent: a second delete changes nothing more (it reports the code as unknown).
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    access: 'edit',
    async run(args, service) {
      const code = args['code'] as string;
      const outcome = await service.remove(code, args['domain']);
      if (outcome.ok) return structured({ short_code: code, deleted: true });
      return outcome.error === 'not_found' ? missing(service, code, args['domain']) : failed(outcome.detail);
    },
  },
  {
    name: 'update_url',
    title: 'Edit a short link',
    description:
      'Change the original URL, the retention, the visit limit, the title or the tags of a live short link; the code, creation time and visit count stay. Needs a key whose role may edit (admin, or an editor on the links it made). ' +
      'retention_days still counts from the creation time, so a shorter one can expire the link at once; max_visits null removes the limit, ' +
      'and one at or below the visit count uses the link up; title null removes the title; tags replaces every tag ([] removes them); ' +
      'each routing argument (rules, forward_query, valid_since, valid_until, fallback_url, password) sets its part, null removes it. Returns the updated link.',
    inputSchema: {
      type: 'object',
      properties: {
        code: CODE,
        domain: DOMAIN,
        api_key: API_KEY,
        url: { type: 'string', description: 'The new absolute http(s) URL.' },
        retention_days: { ...RETENTION, description: `The new lifetime in days from the creation time, 0 to ${MAX_RETENTION_DAYS}; 0 = forever.` },
        max_visits: { ...MAX_VISITS_ARG, description: `The new limit of counted visits, 1 to ${MAX_VISITS}; null = unlimited.` },
        title: { ...TITLE_ARG, description: `The new title, at most ${MAX_TITLE_LENGTH} characters; null or empty removes it.` },
        tags: { ...TAGS_ARG, description: `The new tags, replacing the old ones (${TAG_RULES}); [] removes them.` },
        ...ROUTING_ARGS,
      },
      required: ['code'],
      additionalProperties: false,
    },
    outputSchema: RECORD_SCHEMA,
    // Destructive: the old URL, retention or limit is overwritten, not added to. Idempotent: the
    // same edit again leaves the same link.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    access: 'edit',
    async run(args, service) {
      const code = args['code'] as string;
      const edit = {
        url: args['url'],
        retentionDays: args['retention_days'],
        maxVisits: args['max_visits'],
        title: args['title'],
        tags: args['tags'],
        routing: routingArgs(args),
      };
      const outcome = await service.update(code, edit, args['domain']);
      if (outcome.ok) return structured(asRecord(outcome.record));
      return outcome.error === 'not_found' ? missing(service, code, args['domain']) : failed(outcome.detail);
    },
  },
  {
    name: 'get_stats',
    title: 'Visit statistics of a short link',
    description:
      "A live link's visits in a range: totals, unique visitors, bots, a series of buckets, and the top referrers, countries, browsers, operating systems and devices. Needs a key whose role may read (viewer or admin, or an editor on the links it made). " +
      'from and to are Unix seconds or ISO 8601 (default: the last 30 days; a time without an offset is read in tz); interval is hour, day, week or month ' +
      '(default by the span; at most 1,000 buckets); tz an IANA zone (default UTC); bots exclude (default), include or only.',
    inputSchema: {
      type: 'object',
      properties: {
        code: CODE,
        domain: DOMAIN,
        api_key: API_KEY,
        from: { type: 'string', description: 'Start of the range: Unix seconds (digits) or ISO 8601, e.g. 2026-03-01 or 2026-03-01T12:00:00Z.' },
        to: { type: 'string', description: 'End of the range (excluded): Unix seconds (digits) or ISO 8601.' },
        interval: { type: 'string', description: 'hour, day, week or month.' },
        tz: { type: 'string', description: 'An IANA time zone such as Europe/Berlin.' },
        bots: { type: 'string', description: 'exclude, include or only.' },
      },
      required: ['code'],
      additionalProperties: false,
    },
    outputSchema: LINK_STATS_SCHEMA,
    annotations: CLOSED,
    access: 'read',
    async run(args, service) {
      const code = args['code'] as string;
      const { from, to, interval, tz, bots } = args;
      const outcome = await service.stats(code, { from, to, interval, tz, bots }, args['domain']);
      if (outcome.ok) return structured({ ...outcome.stats });
      return outcome.error === 'not_found' ? missing(service, code, args['domain']) : failed(outcome.detail);
    },
  },
  SET_RULES,
];
