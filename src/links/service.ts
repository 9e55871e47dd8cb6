/**
 * The link service, independent of HTTP: every door — REST, MCP, Shlink's and YOURLS' APIs — calls
 * these operations with plain values and gets an outcome back (`outcomes.ts`), `{ ok: true, … }`
 * or a `Failure` it translates into its own shape. One implementation of each operation, over any
 * `LinkStore`, and each rule decided once, here: a door only translates names and shapes. Only
 * bugs are thrown.
 *
 * The operations live beside this file, one concern each: the create (`shorten.ts`), the edit and
 * the delete (`edits.ts`), the reads and the list (`reads.ts`), the redirect's decision
 * (`redirect.ts`), the visits and their stats (`visits.ts`).
 */
import type { Logger } from '../log.ts';
import type { LinkRecord, LinkStore } from '../store/link-store.ts';
import type { Recorder } from '../visits/recorder.ts';
import { RESERVED_SEGMENTS } from './codes.ts';
import type { CreateLimiter } from './create-limit.ts';
import { createDomainOperations } from './domain-redirects.ts';
import { createOrphans } from './orphans.ts';
import { createDomains, type Domain } from './domains.ts';
import { createEdits } from './edits.ts';
import { createKeys } from './keys.ts';
import { ownLinksOnly, type Principal } from './access.ts';
import { guarded, NOT_FOUND, type NotFound, type Unavailable } from './outcomes.ts';
import { createReads } from './reads.ts';
import { recordView, type UrlRecord } from './record.ts';
import { createRedirect } from './redirect.ts';
import type { RuleVisitors } from './rule-visitor.ts';
import { createShorten } from './shorten.ts';
import { createVisitOperations, type VisitTracking } from './visits.ts';

// A listing's slices are records or, from a database, promises of them: the doors name that type
// here, so no door imports the storage contract.
export type { MaybePromise } from '../store/link-store.ts';
export type { VisitRequest } from '../visits/recorder.ts';
export type { Conflict, Failure, Found, Invalid, NotFound, RateLimited, Unavailable } from './outcomes.ts';
export type { LinkEdit, RemoveOutcome, UpdateOutcome } from './edits.ts';
export type { ListQuery } from './list-query.ts';
export type { GetOutcome, Listing, ListingOutcome, ListOutcome, LookupOutcome } from './reads.ts';
export type { Visit } from './redirect.ts';
export type { OrphanType } from '../store/orphan-store.ts';
export type { ShortenInput, ShortenOutcome } from './shorten.ts';

export interface ServiceOptions {
  store: LinkStore;
  baseUrl: string;
  /** Extra short domains besides `baseUrl`'s host (`domains.ts`); absent: none. */
  domains?: readonly string[] | undefined;
  /** A request's domain is its `X-Forwarded-Host` when it has one (`trust_proxy` > 0). */
  forwardedHost?: boolean | undefined;
  minShortLength: number;
  maxShortLength: number;
  maxUrlLength: number;
  apiKeys: readonly string[];
  /** Milliseconds since the epoch; injectable for expiry tests. */
  now: () => number;
  randomCode: (length: number) => string;
  log: Logger;
  /** Told of each link created, once it is durable (metrics). */
  created?: () => void;
  /** Makes the event of a counted visit (`visit_tracking: events`); absent: visits are only counted. */
  recorder?: Recorder | undefined;
  /** `visit_tracking` (docs/analytics.md), as the stats report it; default `events`. */
  visitTracking?: VisitTracking;
  /** The instance's reserved words (codes.ts `reservedWords`); default: the service's own. */
  reserved?: ReadonlySet<string>;
  /** `create_rate_limit` (create-limit.ts); absent: creates are not limited. */
  createLimit?: CreateLimiter | undefined;
  /** `create_access` (access.ts): `key` makes every create need a key whose role may create; default `open`. */
  createAccess?: 'open' | 'key';
  /** What redirect rules and password attempts read of a request (rule-visitor.ts): `trust_proxy`, the country's source. */
  ruleVisitors?: RuleVisitors | undefined;
}

export function createService(options: ServiceOptions) {
  const { store, baseUrl, now } = options;
  const reserved = options.reserved ?? RESERVED_SEGMENTS;
  const seconds = (): number => Math.floor(now() / 1000);
  const domains = createDomains(baseUrl, options.domains, options.forwardedHost);
  const { keyOf } = domains;
  const urlRules = { maxLength: options.maxUrlLength, baseUrl, otherBases: domains.otherBases };
  const view = (rec: LinkRecord): UrlRecord => recordView(rec, domains);
  const { visit, visitIn, visitOn } = createRedirect({ store, seconds, recorder: options.recorder, reserved, visitors: options.ruleVisitors });

  return {
    /** The service's domains (`domains.ts`): which hosts it answers for, and how a link's key reads. */
    domains,

    shortUrl: (code: string, domain: Domain = null): string => domains.shortUrl(domains.key(code, domain)),

    /** API keys with roles: who a presented key is, and the stored keys (`keys.ts`). */
    keys: createKeys({
      keyStore: store.accessKeys,
      apiKeys: options.apiKeys,
      seconds,
      log: options.log,
      createAccess: options.createAccess ?? 'open',
      hostOf: domains.hostOf,
    }),

    /**
     * Whether `principal` may touch the link of `code`: always, unless its key acts on one domain
     * and the link is on another, or its role limits it to its own links (an `editor`) and the
     * link is another author's or none — then `not_found`, as if it did not exist.
     */
    async mayTouch(principal: Principal, code: string, domain?: unknown): Promise<true | NotFound | Unavailable> {
      const key = keyOf(code, domain);
      // A bad domain or code is the operation's own answer, which it gives next.
      if (typeof key !== 'string') return true;
      if (principal.domain !== undefined && domains.named(principal.domain) !== domains.domainOf(key)) return NOT_FOUND;
      const author = ownLinksOnly(principal);
      if (author === undefined) return true;
      const rec = await guarded(() => store.get(key, seconds()));
      if (rec !== undefined && 'ok' in rec) return rec;
      return rec?.author === author ? true : NOT_FOUND;
    },

    shorten: createShorten({
      store,
      urlRules,
      codeRules: { minShortLength: options.minShortLength, maxShortLength: options.maxShortLength, reserved, domains },
      seconds,
      view,
      randomCode: options.randomCode,
      log: options.log,
      created: options.created,
      createLimit: options.createLimit,
    }),
    ...createReads({ store, seconds, view, keyOf, named: domains.named }),
    ...createDomainOperations({ store, domains, urlRules, seconds }),
    ...createOrphans({ store, recorder: options.recorder }),
    ...createEdits({ store, urlRules, seconds, view, keyOf }),
    ...createVisitOperations({ store, now, tracking: options.visitTracking ?? 'events', domains }),
    visit,
    visitIn,
    visitOn,
  };
}

export type Service = ReturnType<typeof createService>;
