/**
 * A row of `links` and the record it is (docs/postgres.md): what every statement of
 * `statements.ts` that reads links gives back, turned into the storage contract's `LinkRecord`.
 */
import type postgres from 'postgres';
import { routingOf, type LinkRecord, type ListQuery, type Routing } from '../link-store.ts';

/** A row of `links` as the driver returns it: `bigint` columns come as strings. */
export interface Row {
  code: string;
  url: string;
  created_at: string;
  retention_days: number;
  visit_count: string;
  untracked_visits: string;
  max_visits: number | null;
  title: string | null;
  tags: string[];
  /** Migration 5: the stored key that created the link. */
  author: string | null;
  /** Migration 7: where the link sends each visitor (store/routing.ts); NULL for none. */
  routing: unknown;
  seq: string;
}

/** What a list keeps (`ListQuery`'s filters). */
export type ListFilter = Pick<ListQuery, 'q' | 'tags' | 'author' | 'domain'>;

export const toRecord = (r: Row): LinkRecord => ({
  code: r.code,
  url: r.url,
  createdAt: Number(r.created_at),
  retentionDays: r.retention_days,
  visits: Number(r.visit_count),
  untracked: Number(r.untracked_visits),
  maxVisits: r.max_visits,
  // Only what the link has, as every store answers (most links have neither).
  ...(r.title !== null && { title: r.title }),
  ...(r.tags.length > 0 && { tags: r.tags }),
  ...(r.author !== null && { author: r.author }),
  ...routingField(r.routing),
});

/** A row's routing as a record holds it: none for NULL, and none for a value this build cannot read. */
function routingField(value: unknown): { routing?: Routing } {
  const routing = routingOf(value);
  return routing === undefined || routing === false ? {} : { routing };
}

/** A value of a column a write sets (`update`). */
export type ColumnValue = string | number | string[] | null | postgres.Parameter;

/** A title as the list's `q` searches it (`title_folded`, migration 4). */
export const folded = (title: string | null | undefined): string | null => (title === null || title === undefined ? null : title.toLowerCase());
