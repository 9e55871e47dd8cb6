/**
 * The PostgreSQL store's changes to links (docs/postgres.md): inserts in batches (`inserts.ts`
 * groups them; here is what a batch sends, and how the code of an expired link is taken over),
 * deletes with their events, and edits of one code in the order they were asked. Each writes its
 * webhook events (docs/postgres.md, webhooks) in its own statement or transaction (`webhooks-fanout.ts`).
 *
 * Its own file because each is a short transaction or a statement with its own rule of order,
 * apart from the reads and the redirect: `PostgresStore` hands them over as they come.
 */
import type { InsertChain, LinkChanges, LinkRecord } from '../link-store.ts';
import type { EventType } from '../webhook-store.ts';
import type { PostgresCalls } from './calls.ts';
import { InsertBatches, type PendingInsert } from './inserts.ts';
import type { LinkCount } from './jobs.ts';
import { type ColumnValue, folded, type PostgresStatements, toRecord } from './statements.ts';
import type { WebhookFanout } from './webhooks-fanout.ts';
import type { CreatedEvents } from './webhooks-sql.ts';

export class PostgresWrites {
  private readonly inserts = new InsertBatches((batch) => this.insertBatch(batch));
  /** The last edit asked for, per code with edits in flight. */
  private readonly edits = new Map<string, Promise<void>>();

  /** `links`: moved by each insert and delete; `wrote`: told when a write that `started` was committed. */
  constructor(
    private readonly calls: PostgresCalls,
    private readonly statements: PostgresStatements,
    private readonly links: LinkCount,
    private readonly wrote: (started: number) => void,
    /** The events of the changes; absent: a store opened without webhook bodies. */
    private readonly fanout?: WebhookFanout,
  ) {}

  /** Whether some subscription wants `type` of the link of `code` (the copy in memory's answer). */
  private async told(type: EventType, code: string): Promise<boolean> {
    return this.fanout === undefined ? false : await this.fanout.wants(type, code);
  }

  /** Inserts go out in batches, in the order they were asked (see `InsertBatches`). */
  insert(record: LinkRecord, now: number, chain?: InsertChain): Promise<boolean> {
    return this.inserts.insert(record, now, chain);
  }

  private async insertBatch(batch: PendingInsert[]): Promise<void> {
    const started = performance.now();
    let inserted: Set<string>;
    let created: CreatedEvents | undefined;
    try {
      const asked = this.fanout?.created(batch.map((p) => p.record));
      created = asked instanceof Promise ? await asked : asked;
      // The links and their `link.created` rows in one statement: a code lost to another writes none.
      const outbox = created === undefined ? undefined : this.fanout?.afterInsert(created);
      const done = await this.calls.run(this.statements.insertBatch(batch, outbox));
      inserted = new Set(done.map((r) => (r as { code: string }).code));
    } catch (err) {
      for (const p of batch) p.reject(err);
      return;
    }
    if (inserted.size > 0) {
      this.wrote(started);
      this.links.moved(inserted.size);
    }
    for (const p of batch) {
      if (inserted.has(p.record.code)) p.resolve(true);
      else await this.replaceExpired(p.record, p.now, created).then(p.resolve, p.reject);
    }
  }

  /**
   * The code is held: by a live link (a collision), or by an expired one not yet deleted, whose
   * code is free. Of concurrent inserts the first to delete it wins: the others wait on its row
   * lock, then find no expired row, or conflict with the new one.
   */
  private async replaceExpired(record: LinkRecord, now: number, created: CreatedEvents | undefined): Promise<boolean> {
    const event = created === undefined ? undefined : this.fanout?.createdOne(created, record.code);
    const started = performance.now();
    const replaced = await this.calls.transaction(async (tx) => {
      const gone = await this.statements.deleteExpired(tx, record.code, now);
      if (gone.length === 0) return false;
      await this.statements.deleteEvents(
        tx,
        gone.map((r) => r.seq),
      );
      const added = await this.statements.insertOne(tx, record);
      if (added.length === 0) return false;
      if (event !== undefined) await this.fanout!.writeIn(tx, event);
      return true;
    });
    if (replaced) this.wrote(started);
    return replaced;
  }

  async delete(code: string, now: number): Promise<boolean> {
    const started = performance.now();
    const told = await this.told('link.deleted', code);
    // The link, then its events (`deleteEvents` says why two statements), then its webhooks', in one transaction.
    const deleted = await this.calls.transaction(async (tx) => {
      const rows = await this.statements.delete(tx, code, now);
      if (rows.length === 0) return false;
      await this.statements.deleteEvents(
        tx,
        rows.map((r) => r.seq),
      );
      if (told) await this.fanout!.write(tx, 'link.deleted', toRecord(rows[0]!), now);
      return true;
    });
    if (!deleted) return false;
    this.wrote(started);
    this.links.moved(-1);
    return true;
  }

  /**
   * Edits of one code from this process apply in the order they were asked (each sees the ones
   * asked before it), as they do in the log store; a pool alone would run them in any order.
   */
  update(code: string, changes: LinkChanges, now: number): Promise<LinkRecord | undefined> {
    const before = this.edits.get(code);
    const mine = (before ?? Promise.resolve()).then(() => this.updateNow(code, changes, now));
    const tail = mine.then(
      () => undefined,
      () => undefined,
    );
    this.edits.set(code, tail);
    void tail.then(() => {
      if (this.edits.get(code) === tail) this.edits.delete(code);
    });
    return mine;
  }

  private async updateNow(code: string, changes: LinkChanges, now: number): Promise<LinkRecord | undefined> {
    const set: Record<string, ColumnValue> = {};
    if (changes.url !== undefined) set['url'] = changes.url;
    if (changes.retentionDays !== undefined) set['retention_days'] = changes.retentionDays;
    if (changes.maxVisits !== undefined) set['max_visits'] = changes.maxVisits;
    if (changes.title !== undefined) {
      set['title'] = changes.title;
      set['title_folded'] = folded(changes.title);
    }
    if (changes.tags !== undefined) set['tags'] = [...changes.tags];
    const columns = Object.keys(set);
    if (columns.length === 0 && changes.routing === undefined) {
      const rows = await this.calls.run(this.statements.get(code, now));
      return rows[0] && toRecord(rows[0]);
    }
    const started = performance.now();
    // With `link.updated` wanted, the edit and its rows in one transaction, the data from the row it returned.
    const record = (await this.told('link.updated', code))
      ? await this.calls.transaction(async (tx) => {
          const [row] = await this.statements.update(code, now, set, columns, changes.routing, tx);
          if (row === undefined) return undefined;
          const updated = toRecord(row);
          await this.fanout!.write(tx, 'link.updated', updated, now);
          return updated;
        })
      : await this.calls.run(this.statements.update(code, now, set, columns, changes.routing)).then((rows) => rows[0] && toRecord(rows[0]));
    if (record === undefined) return undefined;
    this.wrote(started);
    return record;
  }
}
