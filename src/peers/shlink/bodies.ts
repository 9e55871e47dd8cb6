/**
 * The bodies of Shlink's create and edit of a short URL in our terms (docs/compat.md): what the
 * service is to be asked, or the `invalid-data` problem naming Shlink's field. Pure. What a URL, a
 * code, a title, tags, a visit limit and the routing fields may be is the service's to decide;
 * only Shlink's spellings are read here: its ISO 8601 `validSince` and `validUntil` become the
 * link's `valid_since` and `valid_until` (Unix seconds), its `forwardQuery` the link's
 * `forward_query`.
 */
import { MAX_RULE_TIME } from '../../links/redirect-rules.ts';
import type { RoutingInput } from '../../links/routing-input.ts';
import type { LinkEdit } from '../../links/service.ts';
import { isoSeconds, type Parsed, isProblem } from './params.ts';
import { invalidData, type Problem } from './problems.ts';

/** The code lengths this service generates (MIN_SHORT_LENGTH..MAX_SHORT_LENGTH), which `shortCodeLength` must keep to. */
export interface Limits {
  minShortLength: number;
  maxShortLength: number;
}

/** Shlink's two instants, by their names. */
const INSTANTS = ['validSince', 'validUntil'] as const;
type InstantName = (typeof INSTANTS)[number];

/**
 * Shlink's ISO 8601 date or time (UTC without an offset) as Unix seconds; null, or empty, for none;
 * undefined when absent. Bare digits are no ISO 8601 date, so they are refused, as Shlink does.
 */
export function instantOf(raw: unknown, name: InstantName): Parsed<number | null | undefined> {
  if (raw === undefined) return undefined;
  if (raw === null || raw === '') return null;
  const seconds = typeof raw === 'string' && !/^\d*$/.test(raw) ? isoSeconds(raw, MAX_RULE_TIME) : undefined;
  if (seconds !== undefined) return seconds;
  return invalidData([name], `${name} must be an ISO 8601 date or time from 1970 to 9999, such as 2026-05-01T10:00:00+02:00, or null`);
}

/**
 * The routing fields of a create or edit body: `validSince`, `validUntil` and `forwardQuery` by
 * the service's names (null removes a part on an edit); undefined when the body gives none.
 */
function routingOf(body: Readonly<Record<string, unknown>>): Parsed<RoutingInput | undefined> {
  const routing: RoutingInput = {};
  for (const name of INSTANTS) {
    const instant = instantOf(body[name], name);
    if (isProblem(instant)) return instant;
    if (instant !== undefined) routing[name] = instant;
  }
  if (body['forwardQuery'] !== undefined) routing.forwardQuery = body['forwardQuery'];
  return Object.keys(routing).length === 0 ? undefined : routing;
}

/** Options Shlink has and this service has not, or not in this body: refused unless absent, null or empty. */
function refusedOptions(body: Readonly<Record<string, unknown>>): Problem | undefined {
  const given = (name: string): boolean => body[name] !== undefined && body[name] !== null && body[name] !== '';
  if (given('pathPrefix')) return invalidData(['pathPrefix'], 'pathPrefix is not supported');
  // Shlink's create and edit take no rules; refused rather than dropped, so a client learns where they go.
  if (Array.isArray(body['redirectRules']) && body['redirectRules'].length > 0) {
    return invalidData(['redirectRules'], 'redirect rules are set with POST /rest/v3/short-urls/<code>/redirect-rules');
  }
  for (const name of ['crawlable', 'forwardQuery', 'findIfExists']) {
    if (body[name] !== undefined && body[name] !== null && typeof body[name] !== 'boolean') return invalidData([name], `${name} must be true or false`);
  }
  return undefined;
}

export interface CreateRequest {
  /** `ShortenInput` fields, unchecked: the service checks them. */
  url: unknown;
  code: unknown;
  title: unknown;
  tags: unknown;
  maxVisits: unknown;
  /** `validSince`, `validUntil` and `forwardQuery`, as the service takes them; undefined: none given. */
  routing: RoutingInput | undefined;
  /** The instants asked for (Unix seconds), to compare with an existing link's; undefined: none. */
  validSince: number | undefined;
  validUntil: number | undefined;
  findIfExists: boolean;
  /** The link's domain as sent (a host; null, empty or absent: the default one), checked by the service. */
  domain: unknown;
}

/** The body of `POST /rest/v3/short-urls`. */
export function parseCreateBody(body: Readonly<Record<string, unknown>>, limits: Limits): Parsed<CreateRequest> {
  const refused = refusedOptions(body);
  if (refused !== undefined) return refused;
  const length = body['shortCodeLength'];
  if (
    length !== undefined &&
    length !== null &&
    (typeof length !== 'number' || !Number.isInteger(length) || length < limits.minShortLength || length > limits.maxShortLength)
  ) {
    return invalidData(['shortCodeLength'], `shortCodeLength must be an integer from ${limits.minShortLength} to ${limits.maxShortLength}`);
  }
  const routing = routingOf(body);
  if (isProblem(routing)) return routing;
  return {
    url: body['longUrl'],
    code: body['customSlug'],
    title: body['title'],
    tags: body['tags'],
    maxVisits: body['maxVisits'],
    routing,
    validSince: typeof routing?.validSince === 'number' ? routing.validSince : undefined,
    validUntil: typeof routing?.validUntil === 'number' ? routing.validUntil : undefined,
    findIfExists: body['findIfExists'] === true,
    domain: body['domain'],
  };
}

/**
 * The edit for `service.update` (only the fields the body gives), from the body of
 * `PATCH /rest/v3/short-urls/:code` of a link whose retention ends it at `expiresAt` (null: never).
 * Tags of null clear them, as Shlink.
 *
 * A retention ends a link too, and Shlink's shape shows it as `validUntil` when it comes first
 * (`shapes.ts`). So that a client reads back the end it sets, a `validUntil` that is null or later
 * than the retention's end also removes the retention: the link then ends at `valid_until` alone.
 * An earlier `validUntil` leaves the retention as it is, since the link ends first by it anyway.
 */
export function parseEditBody(body: Readonly<Record<string, unknown>>, expiresAt: number | null): Parsed<LinkEdit> {
  const refused = refusedOptions(body);
  if (refused !== undefined) return refused;
  const routing = routingOf(body);
  if (isProblem(routing)) return routing;
  const edit: LinkEdit = {};
  if (body['longUrl'] !== undefined) edit.url = body['longUrl'];
  if (body['title'] !== undefined) edit.title = body['title'];
  if (body['tags'] !== undefined) edit.tags = body['tags'] === null ? [] : body['tags'];
  if (body['maxVisits'] !== undefined) edit.maxVisits = body['maxVisits'];
  if (routing !== undefined) edit.routing = routing;
  const until = routing?.validUntil as number | null | undefined;
  if (until !== undefined && expiresAt !== null && (until === null || until > expiresAt)) edit.retentionDays = 0;
  return edit;
}
