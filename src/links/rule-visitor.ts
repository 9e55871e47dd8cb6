/**
 * A request as the facts a redirect rule may ask of it (links/redirect-rules.ts `RuleVisitor`):
 * its `User-Agent`'s families, its country, its languages, its query, its client address and the
 * time. Made for each visit of a link with rules, each fact read only when a condition asks it.
 *
 * The same readings as a visit's event (recorder.ts): the client address behind `trust_proxy`
 * proxies, the country from a trusted proxy's header, else from the `.mmdb` file, else none; but
 * `DNT` and `Sec-GPC` do not apply: nothing here is kept, and a rule is the link owner's choice of
 * where to send a visitor, as a language or device redirect on any site is.
 */
import type { RuleVisitor } from './rule-conditions.ts';
import { canonicalAddress, clientAddressEntry } from '../visits/client-address.ts';
import { headerCountry, type CountrySource, type VisitRequest } from '../visits/recorder.ts';
import { createUserAgentClassifier, type UserAgentClass } from '../visits/user-agent.ts';

export interface RuleVisitorOptions {
  /** Proxies in front (0–10), as `trust_proxy`. */
  trustProxy: number;
  /** The country header, lower case; empty for none. Read only when `trustProxy` > 0. */
  geoipHeader: string;
  countries?: CountrySource | undefined;
  /** Unix seconds now. */
  seconds: () => number;
  /** The families of a `User-Agent` (default: a cached classifier of its own). */
  userAgents?: (ua: string | undefined) => UserAgentClass;
}

/** The request of a visit, with its target: rules read its query. */
export interface RoutedRequest extends VisitRequest {
  readonly url?: string | undefined;
}

/** The query of a request target (after its first `?`), or '' for none. */
export function queryOf(target: string | undefined): string {
  const at = target === undefined ? -1 : target.indexOf('?');
  return at === -1 ? '' : target!.slice(at + 1);
}

export interface RuleVisitors {
  /** The facts of `req` for a rule list. */
  of(req: RoutedRequest): RuleVisitor;
  /** The client's address as `trust_proxy` finds it, one spelling per address; 'unknown' without one. */
  addressOf(req: VisitRequest): string;
}

export function createRuleVisitors(options: RuleVisitorOptions): RuleVisitors {
  const entryOf = clientAddressEntry(options.trustProxy);
  const userAgents = options.userAgents ?? createUserAgentClassifier();
  const header = options.trustProxy > 0 && options.geoipHeader !== '' ? options.geoipHeader : undefined;
  const countries = header === undefined ? options.countries : undefined;
  const addressOf = (req: VisitRequest): string | null => {
    const entry = entryOf(req.socket.remoteAddress, req.headers['x-forwarded-for']);
    return entry === null ? null : canonicalAddress(entry);
  };
  return {
    of(req) {
      const families = (): UserAgentClass => userAgents(req.headers['user-agent']);
      return {
        os: () => families().os,
        device: () => families().device,
        browser: () => families().browser,
        acceptLanguage: () => {
          const value = req.headers['accept-language'];
          return typeof value === 'string' ? value : undefined;
        },
        country: () => {
          if (header !== undefined) return headerCountry(req.headers[header]);
          const address = countries === undefined ? null : addressOf(req);
          return address === null ? null : countries!.countryOf(address);
        },
        query: () => new URLSearchParams(queryOf(req.url)),
        address: () => addressOf(req),
        now: options.seconds,
      };
    },
    addressOf: (req) => addressOf(req) ?? 'unknown',
  };
}
