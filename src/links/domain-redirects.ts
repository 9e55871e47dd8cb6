/**
 * The domains and their own redirects (docs/api.md, domains): the list an admin reads, the change
 * of a domain's three redirects, and where a domain sends a request it has no link for — `GET /`
 * (`base_url`), an unknown code (`not_found`), an expired or used-up link (`expired`). Each is a
 * `302`, never a visit; a domain without one answers as a single-domain instance does.
 */
import { NO_REDIRECTS, type DomainRedirects } from '../store/domain-store.ts';
import { mapMaybe, type LinkStore, type MaybePromise } from '../store/link-store.ts';
import type { Domain, Domains } from './domains.ts';
import { guarded, NOT_FOUND, outage, refused, type Invalid, type NotFound, type Unavailable } from './outcomes.ts';
import { Refusal } from './refusal.ts';
import { checkUrl, type UrlRules } from './url-rules.ts';

/** A domain as `GET /api/domains` shows it. */
export interface DomainView {
  domain: string;
  is_default: boolean;
  /** Its live links. */
  links: number;
  redirects: { base_url: string | null; not_found: string | null; expired: string | null };
}

/** What sends a request elsewhere: `GET /`, an unknown code, an expired or used-up link. */
export type Elsewhere = keyof DomainRedirects;

/** A change of a domain's redirects as a door received it: absent fields stay, null clears one. */
export interface RedirectsEdit {
  baseUrl?: unknown;
  notFound?: unknown;
  expired?: unknown;
}

export type DomainsOutcome = { ok: true; domains: DomainView[] } | Unavailable;
export type DomainOutcome = { ok: true; domain: DomainView } | Invalid | NotFound | Unavailable;

export interface DomainDeps {
  store: LinkStore;
  domains: Domains;
  urlRules: UrlRules;
  seconds: () => number;
}

const EMPTY: ReadonlyMap<string, DomainRedirects> = new Map();
/** The store's key of a domain's redirects: the default one is `''`, whatever host `base_url` names. */
const hostKey = (domain: Domain): string => domain ?? '';

export function createDomainOperations({ store, domains, urlRules, seconds }: DomainDeps) {
  const all = (fresh = false): MaybePromise<ReadonlyMap<string, DomainRedirects>> => store.domains?.domainRedirects(fresh) ?? EMPTY;

  async function view(domain: Domain, redirects: DomainRedirects): Promise<DomainView> {
    const page = await store.list({ limit: 1, offset: 0, now: seconds(), domain });
    page.release();
    const { baseUrl, notFound, expired } = redirects;
    return {
      domain: domain ?? domains.defaultHost,
      is_default: domain === null,
      links: page.total,
      redirects: { base_url: baseUrl, not_found: notFound, expired },
    };
  }

  /** A redirect's new value: absent keeps `old`, null or '' clears it, else a URL by the link rules. */
  function field(input: unknown, old: string | null, name: string): string | null | Refusal {
    if (input === undefined) return old;
    if (input === null || input === '') return null;
    const url = checkUrl(input, urlRules);
    return url instanceof Refusal ? new Refusal(url.detail.replace(/^url\b/, name)) : url;
  }

  return {
    /**
     * Where `domain` sends what it has no link for, or null: the page a single-domain instance
     * answers. A store that cannot be read now answers null too: the page, not an error.
     */
    elsewhere(domain: Domain, what: Elsewhere): MaybePromise<string | null> {
      if (store.domains === undefined) return null;
      try {
        const read = mapMaybe(all(), (map) => map.get(hostKey(domain))?.[what] ?? null);
        return read instanceof Promise ? read.catch(() => null) : read;
      } catch {
        return null;
      }
    },

    /** Every domain, the default one first, with its live links and its redirects. */
    async listDomains(): Promise<DomainsOutcome> {
      try {
        const map = await all(true);
        const hosts: Domain[] = [null, ...domains.hosts.slice(1)];
        return { ok: true, domains: await Promise.all(hosts.map((d) => view(d, map.get(hostKey(d)) ?? NO_REDIRECTS))) };
      } catch (err) {
        return outage(err);
      }
    },

    /** Sets any of a domain's three redirects (`host` one of this service's, else not found). */
    async setRedirects(host: string, edit: RedirectsEdit): Promise<DomainOutcome> {
      const domain = domains.named(host);
      if (domain instanceof Refusal || host === '' || host.toLowerCase() === 'default') return NOT_FOUND;
      if (store.domains === undefined) return { ok: false, error: 'unavailable', detail: 'this store keeps no domain redirects' };
      const map = await guarded(() => all(true));
      if ('ok' in map) return map;
      const old = map.get(hostKey(domain)) ?? NO_REDIRECTS;
      const baseUrl = field(edit.baseUrl, old.baseUrl, 'base_url');
      if (baseUrl instanceof Refusal) return refused(baseUrl);
      const notFound = field(edit.notFound, old.notFound, 'not_found');
      if (notFound instanceof Refusal) return refused(notFound);
      const expired = field(edit.expired, old.expired, 'expired');
      if (expired instanceof Refusal) return refused(expired);
      const redirects = { baseUrl, notFound, expired };
      try {
        await store.domains.setDomainRedirects(hostKey(domain), redirects);
        return { ok: true, domain: await view(domain, redirects) };
      } catch (err) {
        return outage(err);
      }
    },
  };
}
