/**
 * A link as every door shows it (docs/api.md, the record): the REST routes, MCP, the export and
 * the coming peer APIs read a stored link through `recordView`, so the public shape is decided once.
 */
import { expiresAt, type LinkRecord, type MaybePromise } from '../store/link-store.ts';
import type { Domains } from './domains.ts';
import { routingView, type RoutingView } from './routing-input.ts';

/** The link's own fields as the API shows them (docs/api.md). */
export interface UrlFields {
  short_code: string;
  /** The link's domain (docs/api.md, domains): null for the default one. */
  domain: string | null;
  short_url: string;
  original_url: string;
  created_at: number;
  visit_count: number;
  /** Visits counted without an event (docs/analytics.md): events + untracked_visits = visit_count. */
  untracked_visits: number;
  retention_days: number;
  /** null = unlimited. */
  max_visits: number | null;
  /** `created_at + retention_days × 86400`, or null when kept forever. */
  expires_at: number | null;
  title: string | null;
  /** Distinct, sorted. */
  tags: string[];
  /** The `id` of the stored key that made the link (docs/security.md); null for none (no key, or a key of `API_KEYS`). */
  author: string | null;
}

/** The record as every door shows it: the link's fields, then where it sends each visitor (`routing-input.ts`). */
export type UrlRecord = UrlFields & RoutingView;

export interface UrlList {
  count: number;
  urls: UrlRecord[];
}

/**
 * A page of the list, read in slices; `release` it when done. `Slice` is what `slice` answers:
 * records now (the log store), or a promise of them (a database).
 */
export interface UrlListing<Slice extends MaybePromise<UrlRecord[]> = UrlRecord[]> {
  /** Every live record, this page or not (`X-Total-Count`). */
  total: number;
  /** Records on this page. */
  count: number;
  /** The page's records at positions [from, to). */
  slice(from: number, to: number): Slice;
  release(): void;
}

/** A stored link as the API shows it: its store key (`domains.ts`) read as its code, domain and short URL. */
export function recordView(rec: LinkRecord, domains: Domains): UrlRecord {
  return {
    short_code: domains.codeOf(rec.code),
    domain: domains.domainOf(rec.code),
    short_url: domains.shortUrl(rec.code),
    original_url: rec.url,
    created_at: rec.createdAt,
    visit_count: rec.visits,
    untracked_visits: rec.untracked,
    retention_days: rec.retentionDays,
    max_visits: rec.maxVisits,
    expires_at: expiresAt(rec),
    title: rec.title ?? null,
    tags: rec.tags === undefined ? [] : [...rec.tags],
    // Absent, null or empty: none, as both stores read it.
    author: rec.author || null,
    ...routingView(rec.routing),
  };
}
