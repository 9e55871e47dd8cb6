/**
 * The storage contract of the domains' own redirects (docs/api.md, domains): where a domain sends
 * `GET /` (`baseUrl`), an unknown code (`notFound`) and an expired or used-up link (`expired`),
 * each a URL or null. Kept per host, `''` for the default domain (so its redirects stay its own
 * when `base_url` names another host). Few, small, and read by the service from memory.
 */
import type { MaybePromise } from './link-store.ts';

export interface DomainRedirects {
  readonly baseUrl: string | null;
  readonly notFound: string | null;
  readonly expired: string | null;
}

export const NO_REDIRECTS: DomainRedirects = Object.freeze({ baseUrl: null, notFound: null, expired: null });

/** Whether a domain has no redirect at all: a store keeps nothing for it. */
export const noRedirects = (r: DomainRedirects): boolean => r.baseUrl === null && r.notFound === null && r.expired === null;

export interface DomainStore {
  /**
   * Every domain that has a redirect, by host (`''` the default domain). A store shared by several
   * instances may answer from a copy at most a second old, for the redirects themselves; `fresh`
   * reads what is stored now (the admin's list and change of them).
   */
  domainRedirects(fresh?: boolean): MaybePromise<ReadonlyMap<string, DomainRedirects>>;
  /** Sets a domain's three redirects at once (all null: none); durable before it resolves. */
  setDomainRedirects(host: string, redirects: DomainRedirects): Promise<void>;
}
