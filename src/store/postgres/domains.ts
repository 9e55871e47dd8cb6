/**
 * The domains' own redirects on PostgreSQL (docs/postgres.md): the table `domain_redirects`
 * (migration 6), one row per host that has a redirect (`''` for the default domain), and a copy in
 * memory at most `maxAgeMs` old. The service asks for them on every unknown code, expired link and
 * `GET /` of a domain, where a round trip each would cost more than the answer; a change made on
 * another instance is seen within that second, one made here at once. The admin's list and change
 * of them read the table itself (`fresh`).
 */
import type postgres from 'postgres';
import { noRedirects, type DomainRedirects, type DomainStore } from '../domain-store.ts';
import type { MaybePromise } from '../link-store.ts';
import type { PostgresCalls } from './calls.ts';

interface DomainRow {
  host: string;
  base_url: string | null;
  not_found: string | null;
  expired: string | null;
}

export class PostgresDomains implements DomainStore {
  private cached: ReadonlyMap<string, DomainRedirects> = new Map();
  /** When the copy was read (the store's clock, ms); undefined: read again. */
  private readAt: number | undefined;
  private reading: Promise<ReadonlyMap<string, DomainRedirects>> | undefined;
  /** This instance's changes, reads begun, and which read the copy is (by order, not by the clock). */
  private changes = 0;
  private reads = 0;
  private cachedOrder = 0;

  constructor(
    private readonly sql: postgres.Sql,
    private readonly calls: PostgresCalls,
    private readonly clock: () => number,
    private readonly maxAgeMs: number,
  ) {}

  domainRedirects(fresh = false): MaybePromise<ReadonlyMap<string, DomainRedirects>> {
    if (fresh) return this.read();
    if (this.readAt !== undefined) {
      const age = this.clock() - this.readAt;
      if (age >= 0 && age < this.maxAgeMs) return this.cached;
    }
    // One read for every caller while the copy is old.
    if (this.reading === undefined) {
      const reading = this.read().finally(() => {
        if (this.reading === reading) this.reading = undefined;
      });
      this.reading = reading;
    }
    return this.reading;
  }

  private async read(): Promise<ReadonlyMap<string, DomainRedirects>> {
    const changes = this.changes;
    const order = ++this.reads;
    const started = this.clock();
    const rows = await this.calls.run(this.sql<DomainRow[]>`SELECT host, base_url, not_found, expired FROM domain_redirects`);
    const read = new Map(rows.map((r) => [r.host, Object.freeze({ baseUrl: r.base_url, notFound: r.not_found, expired: r.expired })]));
    // A read begun before a change of this instance may miss it, and one begun before the copy's
    // (the admin's list beside a redirect's read) is older: either answers its own callers only.
    if (this.changes === changes && order > this.cachedOrder) {
      this.cached = read;
      this.readAt = started;
      this.cachedOrder = order;
    }
    return read;
  }

  async setDomainRedirects(host: string, redirects: DomainRedirects): Promise<void> {
    const { baseUrl, notFound, expired } = redirects;
    try {
      await this.calls.run(
        noRedirects(redirects)
          ? this.sql`DELETE FROM domain_redirects WHERE host = ${host}`
          : this.sql`
              INSERT INTO domain_redirects (host, base_url, not_found, expired) VALUES (${host}, ${baseUrl}, ${notFound}, ${expired})
              ON CONFLICT (host) DO UPDATE SET base_url = EXCLUDED.base_url, not_found = EXCLUDED.not_found, expired = EXCLUDED.expired`,
      );
    } finally {
      // This instance sees its own change at once: no copy, nor a read begun before it, answers
      // again. Even on an error: a write whose answer was lost may have been applied.
      this.changes++;
      this.readAt = undefined;
      this.reading = undefined;
    }
  }
}
