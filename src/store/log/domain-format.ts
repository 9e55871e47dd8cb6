/**
 * The domains' own redirects in the log store (format 6, docs/storage.md): their log entry, the
 * table replay and writes keep in memory, and the store of them (`DomainStore`).
 *
 *   H <[host, base_url, not_found, expired]>     a domain's redirects, whole (host '' = the default domain)
 *
 * The field is one JSON array: JSON escapes any tab or line break, so it needs no escaping of its
 * own. The last entry for a host wins; one whose redirects are all null removes the host. A
 * compaction writes one entry per host that has a redirect, and a start-up checkpoint holds the
 * table as it is (`checkpoint.ts`). Like the keys' table (`key-table.ts`), it hangs on the keydir.
 */
import { noRedirects, type DomainRedirects, type DomainStore } from '../domain-store.ts';
import { unwritable } from './write-errors.ts';

export type DomainEntry = { op: 'H'; host: string; redirects: DomainRedirects };

const text = (v: unknown): v is string | null => v === null || (typeof v === 'string' && v !== '');

/** The payload of a domain's entry. */
export function domainPayload(entry: DomainEntry): string {
  const { baseUrl, notFound, expired } = entry.redirects;
  return `H\t${JSON.stringify([entry.host, baseUrl, notFound, expired])}`;
}

/** Whether `decodeDomainFields` reads `entry` back as it is. */
export function domainWritable(entry: DomainEntry): boolean {
  const { baseUrl, notFound, expired } = entry.redirects;
  return typeof entry.host === 'string' && text(baseUrl) && text(notFound) && text(expired);
}

/** A domain's entry from its payload's tab-separated fields, or undefined when it is none. */
export function decodeDomainFields(f: readonly string[]): DomainEntry | undefined {
  if (f.length !== 2) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(f[1]!);
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 4) return undefined;
  const [host, baseUrl, notFound, expired] = value as unknown[];
  if (typeof host !== 'string' || !text(baseUrl) || !text(notFound) || !text(expired)) return undefined;
  return { op: 'H', host, redirects: { baseUrl, notFound, expired } };
}

/** The redirects of each domain that has one, by host. */
export class DomainTable {
  private readonly byHost = new Map<string, DomainRedirects>();

  /** A table of these domains (a checkpoint's). */
  static of(domains: readonly [string, DomainRedirects][]): DomainTable {
    const table = new DomainTable();
    for (const [host, redirects] of domains) table.apply({ op: 'H', host, redirects });
    return table;
  }

  get size(): number {
    return this.byHost.size;
  }

  /** Frozen values; the map itself is the table's, for reading only. */
  all(): ReadonlyMap<string, DomainRedirects> {
    return this.byHost;
  }

  entries(): [string, DomainRedirects][] {
    return [...this.byHost];
  }

  apply(entry: DomainEntry): void {
    if (noRedirects(entry.redirects)) this.byHost.delete(entry.host);
    else this.byHost.set(entry.host, Object.freeze({ ...entry.redirects }));
  }
}

/** Appends entries; `durable` runs once they are on disk, before the promise resolves. */
export type AppendDomains = (entries: DomainEntry[], durable: () => void) => Promise<void>;

/** The log store's `DomainStore`: a write goes through the log's one append path, then memory changes. */
export class LogDomains implements DomainStore {
  constructor(
    private readonly table: () => DomainTable,
    private readonly append: AppendDomains,
  ) {}

  domainRedirects(): ReadonlyMap<string, DomainRedirects> {
    return this.table().all();
  }

  async setDomainRedirects(host: string, redirects: DomainRedirects): Promise<void> {
    const entry: DomainEntry = { op: 'H', host, redirects: { ...redirects } };
    try {
      await this.append([entry], () => this.table().apply(entry));
    } catch (err) {
      throw unwritable(err);
    }
  }
}
