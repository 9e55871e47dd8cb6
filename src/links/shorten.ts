/**
 * The create (docs/api.md, creating links): the client's create limit first, then every field by
 * its rule (`validate.ts`), then a custom code inserted once or generated codes offered to the
 * store until it takes one.
 */
import type { Logger } from '../log.ts';
import { labelsOf, type Labels, type LinkRecord, type LinkStore } from '../store/link-store.ts';
import type { VisitRequest } from '../visits/recorder.ts';
import { candidateCodes } from './codes.ts';
import { storeKey, type Domain, type Domains } from './domains.ts';
import type { CreateLimiter } from './create-limit.ts';
import { outage, refused, type Conflict, type Found, type Invalid, type RateLimited, type Unavailable } from './outcomes.ts';
import type { UrlRecord } from './record.ts';
import { Refusal } from './refusal.ts';
import { checkRouting, createdRouting, hashedChange, type CheckedRouting, type RoutingInput } from './routing-input.ts';
import { checkUrl, type UrlRules } from './url-rules.ts';
import { checkCustomCode, checkMaxVisits, checkRetention, checkTags, checkTitle } from './validate.ts';

export type ShortenOutcome = Found | Invalid | Unavailable | Conflict | RateLimited;

/** The fields of a create (docs/api.md, shorten input), as they arrived. */
export interface ShortenInput {
  url: unknown;
  retentionDays?: unknown;
  /** A custom code; absent, null or '' = generate one. */
  code?: unknown;
  /** absent or null = unlimited. */
  maxVisits?: unknown;
  /** absent, null or '' = none. */
  title?: unknown;
  /** absent or null = none; an array of strings, or as text also one string of comma-separated tags. */
  tags?: unknown;
  /**
   * Which fields came as text (a query string or a form, where numbers are digits and tags may be
   * comma-separated): `true` for every field, or per field. In JSON (and MCP) numbers must be
   * numbers and tags an array.
   */
  textual?: boolean | { retentionDays?: boolean; maxVisits?: boolean; tags?: boolean };
  /**
   * The request that asks for the link: its client address is counted by `create_rate_limit`.
   * Every door onto a create passes it; a caller with no request (the library, a test) is not limited.
   */
  from?: VisitRequest | undefined;
  /** The `id` of the stored key that asks (`access.ts`), recorded as the link's author; absent: none. */
  author?: string | null | undefined;
  /** The domain the link lives on (`domains.ts`): a host of this service; absent, null or '' = the default one. */
  domain?: unknown;
  /** The host of the one domain the asking key acts on (`access.ts`): the link lands there, and another `domain` is refused. */
  keyDomain?: string | undefined;
  /** Where the link sends each visitor (`routing-input.ts`): rules, forward_query, validity, fallback, password. */
  routing?: RoutingInput | undefined;
}

/** What the create rules allow a code to be. */
export interface CodeRules {
  minShortLength: number;
  maxShortLength: number;
  /** The instance's reserved words (codes.ts `reservedWords`). */
  reserved: ReadonlySet<string>;
  /** The instance's domains, which a create's `domain` must name; absent: only the default one. */
  domains?: Domains | undefined;
}

/** A create's fields by their rules: what is stored, but the code when none was asked for. */
export interface CheckedCreate {
  url: string;
  retentionDays: number;
  custom: string | undefined;
  maxVisits: number | null;
  /** Only the labels the link has: most links have neither, and the stores keep nothing for them. */
  labels: Labels | undefined;
  /** The link's domain: null for the default one. */
  domain: Domain;
  /** Its routing, the password not yet hashed; absent for none. */
  routing?: CheckedRouting;
}

/** Every field of a create by its rule, in the order their refusals are told. */
export function checkCreate(input: ShortenInput, urlRules: UrlRules, codeRules: CodeRules): CheckedCreate | Refusal {
  const textual = (field: 'retentionDays' | 'maxVisits' | 'tags'): boolean =>
    typeof input.textual === 'object' ? input.textual[field] === true : input.textual === true;
  const url = checkUrl(input.url, urlRules);
  if (url instanceof Refusal) return url;
  const retentionDays = checkRetention(input.retentionDays, textual('retentionDays'));
  if (retentionDays instanceof Refusal) return retentionDays;
  const custom = checkCustomCode(input.code, codeRules.minShortLength, codeRules.maxShortLength, codeRules.reserved);
  if (custom instanceof Refusal) return custom;
  const maxVisits = checkMaxVisits(input.maxVisits, textual('maxVisits'));
  if (maxVisits instanceof Refusal) return maxVisits;
  const title = checkTitle(input.title);
  if (title instanceof Refusal) return title;
  const tags = checkTags(input.tags, textual('tags'));
  if (tags instanceof Refusal) return tags;
  const domain = codeRules.domains === undefined ? checkNoDomain(input.domain) : codeRules.domains.named(input.domain);
  if (domain instanceof Refusal) return domain;
  const routing = input.routing === undefined ? undefined : checkRouting({ textual: input.textual === true, ...input.routing }, urlRules);
  if (routing instanceof Refusal) return routing;
  return { url, retentionDays, custom, maxVisits, labels: labelsOf(title, tags), domain, ...(routing === undefined ? {} : { routing }) };
}

/** Without domains, only the default one may be named: by nothing at all. */
function checkNoDomain(domain: unknown): null | Refusal {
  return domain === undefined || domain === null || domain === '' ? null : new Refusal('domain must be absent: this service has only its default domain');
}

export interface ShortenDeps {
  store: LinkStore;
  urlRules: UrlRules;
  codeRules: CodeRules;
  /** Unix seconds now. */
  seconds: () => number;
  view: (record: LinkRecord) => UrlRecord;
  randomCode: (length: number) => string;
  log: Logger;
  /** Told of each link created, once it is durable (metrics). */
  created?: (() => void) | undefined;
  /** `create_rate_limit`; absent: creates are not limited. */
  createLimit?: CreateLimiter | undefined;
}

const CODE_IN_USE: Conflict = { ok: false, error: 'conflict', detail: 'code already in use' };

function rateLimited(retryAfter: number): RateLimited {
  const detail = `too many links created from this address: try again in ${retryAfter} second${retryAfter === 1 ? '' : 's'}`;
  return { ok: false, error: 'rate_limited', detail, retryAfter };
}

export function createShorten(deps: ShortenDeps): (input: ShortenInput) => Promise<ShortenOutcome> {
  const { store, codeRules, view } = deps;
  // A code on its domain is the store's key (`domains.ts`).
  const keyOf = storeKey;

  /** Generated codes offered to the store until it takes one; `undefined` when the code space is exhausted. */
  async function generated(fields: CheckedCreate, createdAt: number, extra: Pick<LinkRecord, 'author' | 'routing'>): Promise<LinkRecord | undefined> {
    const { url, retentionDays, maxVisits, labels } = fields;
    for (const code of candidateCodes(deps.randomCode, codeRules.minShortLength, codeRules.maxShortLength, codeRules.reserved)) {
      const record: LinkRecord = { code: keyOf(code, fields.domain), url, createdAt, retentionDays, visits: 0, untracked: 0, maxVisits, ...labels, ...extra };
      // A taken code is refused at once by the log store; only a write is awaited.
      const inserted = store.insert(record, createdAt);
      if (inserted === true || (inserted !== false && (await inserted))) return record;
    }
    return undefined;
  }

  /** `fields` as the key's domain has them: absent, that domain; another, refused. */
  function onKeyDomain(fields: CheckedCreate, input: ShortenInput): CheckedCreate | Refusal {
    if (input.keyDomain === undefined) return fields;
    const own = codeRules.domains === undefined ? null : codeRules.domains.named(input.keyDomain);
    const named = !(input.domain === undefined || input.domain === null || input.domain === '');
    if (own instanceof Refusal || (named && fields.domain !== own)) return new Refusal(`domain: this key acts on ${input.keyDomain} only`);
    return { ...fields, domain: own };
  }

  return async function shorten(input) {
    // First: every create request counts, valid or not (a refused one does not), and a client
    // past its limit costs no validation and no write.
    if (deps.createLimit !== undefined && input.from !== undefined) {
      const wait = deps.createLimit.take(input.from);
      if (wait > 0) return rateLimited(wait);
    }
    const checked = checkCreate(input, deps.urlRules, codeRules);
    const fields = checked instanceof Refusal ? checked : onKeyDomain(checked, input);
    if (fields instanceof Refusal) return refused(fields);
    let record: LinkRecord | undefined;
    // A link made without a stored key carries no author field at all, as before keys had ids;
    // one without routing no routing field.
    const routing = fields.routing === undefined ? undefined : createdRouting(await hashedChange(fields.routing));
    const extra = { ...(input.author ? { author: input.author } : {}), ...(routing === undefined ? {} : { routing }) };
    const createdAt = deps.seconds();
    try {
      if (fields.custom === undefined) {
        record = await generated(fields, createdAt, extra);
      } else {
        // One insert decides: of concurrent creates of one code the store lets exactly one win.
        const { url, retentionDays, maxVisits, labels } = fields;
        record = { code: keyOf(fields.custom, fields.domain), url, createdAt, retentionDays, visits: 0, untracked: 0, maxVisits, ...labels, ...extra };
        if (!(await store.insert(record, createdAt))) return CODE_IN_USE;
      }
    } catch (err) {
      return outage(err);
    }
    if (record === undefined) {
      deps.log.error('code space exhausted', { min: codeRules.minShortLength, max: codeRules.maxShortLength });
      return { ok: false, error: 'unavailable', detail: `no free short code up to ${codeRules.maxShortLength} characters; raise MAX_SHORT_LENGTH` };
    }
    deps.created?.();
    return { ok: true, record: view(record) };
  };
}
