/**
 * The PostgreSQL schema (docs/postgres.md) as numbered migrations. Each runs once per database and
 * is recorded in `schema_migrations`; all of them run in one transaction under an advisory lock, so
 * any number of instances may start together: the first applies what is missing, the others wait
 * for it and then find nothing to do. A migration is never edited once released: a change is a new
 * number.
 */
import type postgres from 'postgres';
import { beginGuarded } from './begin.ts';

interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'links',
    // - `seq` orders the list newest first: an insertion sequence, never the clock (an import keeps
    //   old `created_at` values, and many links share a second).
    // - A hash index on `url`: a btree entry must fit a third of a page, and URLs reach 8 KB.
    // - `visit_count` is in no index, so counting a visit is a HOT update (no index write).
    // - The expiry index serves the background deletion of expired links; a link kept forever
    //   (retention 0) is not in it.
    sql: `
      CREATE TABLE links (
        code text PRIMARY KEY,
        url text NOT NULL,
        created_at bigint NOT NULL,
        retention_days int NOT NULL,
        visit_count bigint NOT NULL DEFAULT 0,
        max_visits int NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY
      );
      CREATE INDEX links_url ON links USING hash (url);
      CREATE UNIQUE INDEX links_seq ON links (seq);
      CREATE INDEX links_expiry ON links ((created_at + retention_days::bigint * 86400)) WHERE retention_days > 0;
    `,
  },
  {
    version: 2,
    name: 'visit events',
    // - `untracked_visits`: visits counted without an event (docs/analytics.md). Every visit counted
    //   before events existed is one, so the invariant events + untracked = visit_count holds from
    //   the start.
    // - Events belong to the link, not its code: they name its `seq`, which a code taken again by a
    //   new link does not share.
    // - Partitioned by month of `time` (Unix seconds), so retention drops whole months instead of
    //   deleting rows one by one; the months themselves are created ahead by the store
    //   (`partitions.ts`), and whatever falls in no month (an import from long ago) lands in the
    //   DEFAULT partition.
    // - `id` is the arrival order, for "newest first by time, then arrival" (an identity column is
    //   not allowed on a partitioned table before PostgreSQL 17: a plain sequence is).
    // - browser, os and device are small numbers: their index in the lists of `packed.ts`.
    // - `visit_keys` holds the daily key of the visitor ids: UNLOGGED, so the key never reaches the
    //   write-ahead log, a replica or a backup (a crash empties it: that day gets a new key).
    sql: `
      ALTER TABLE links ADD COLUMN untracked_visits bigint NOT NULL DEFAULT 0;
      UPDATE links SET untracked_visits = visit_count WHERE visit_count <> 0;
      CREATE SEQUENCE visits_id_seq AS bigint;
      CREATE TABLE visits (
        link_seq bigint NOT NULL,
        time bigint NOT NULL,
        id bigint NOT NULL DEFAULT nextval('visits_id_seq'),
        referrer text NULL,
        country text NULL,
        browser smallint NULL,
        os smallint NULL,
        device smallint NULL,
        bot boolean NOT NULL,
        visitor integer NULL
      ) PARTITION BY RANGE (time);
      ALTER SEQUENCE visits_id_seq OWNED BY visits.id;
      CREATE TABLE visits_default PARTITION OF visits DEFAULT;
      CREATE INDEX visits_link_time ON visits (link_seq, time);
      CREATE INDEX visits_time ON visits (time);
      CREATE UNLOGGED TABLE visit_keys (day integer PRIMARY KEY, key bytea NOT NULL);
    `,
  },
  {
    version: 3,
    name: 'visit day summaries',
    // The summaries of one link's closed UTC days (docs/postgres.md, day summaries; built and read
    // by `visit-days.ts`), so a link's stats read a row a day instead of every event.
    // - `links.events_closed`: the first UTC day still open to the link's redirects. Days before it
    //   may be summarised; a redirect whose event falls before it anyway (an instance whose clock
    //   is behind) bumps `events_epoch` in its own UPDATE, as do an import into such a day and the
    //   deletion of the link's events. A summary is read only while its `epoch` is the link's: no
    //   lock and no grace period, and the redirect stays one statement over the row it updates.
    // - `slots`: 8 series of the 96 quarter hours of the day (every time zone in use is a whole
    //   number of quarter hours off UTC): events (people, bots), then for each filter (people,
    //   bots, both) how many distinct visitors of the day had their first, and their last, event
    //   in each quarter; NULL for a day without events.
    // - `dims`/`vals`/`people`/`bots`: every value of every top list (0 referrer, 1 country,
    //   2 browser, 3 os, 4 device) with its events by bot flag.
    // - The link's delete cascades: a summary never outlives its link, even one built while the
    //   link was being deleted.
    sql: `
      ALTER TABLE links ADD COLUMN events_closed integer NOT NULL DEFAULT 0,
        ADD COLUMN events_epoch bigint NOT NULL DEFAULT 0;
      CREATE TABLE visit_days (
        link_seq bigint NOT NULL REFERENCES links (seq) ON DELETE CASCADE,
        day integer NOT NULL,
        epoch bigint NOT NULL,
        slots integer[] NULL,
        dims smallint[] NOT NULL,
        vals text[] NOT NULL,
        people integer[] NOT NULL,
        bots integer[] NOT NULL,
        PRIMARY KEY (link_seq, day)
      );
    `,
  },
  {
    version: 4,
    name: 'titles and tags',
    // - `tags`: distinct and sorted by the service; never NULL, so "no tags" is one spelling.
    // - A GIN index serves the list's tag filter (`tags @> …`), which matches every tag asked.
    // - `title_folded`: the title as JavaScript's `toLowerCase` folds it, written by the store, so
    //   the list's `q` matches a title exactly as the log store does: the database's `lower`
    //   depends on its collation (under C it folds only A–Z).
    sql: `
      ALTER TABLE links ADD COLUMN title text NULL,
        ADD COLUMN title_folded text NULL,
        ADD COLUMN tags text[] NOT NULL DEFAULT '{}';
      CREATE INDEX links_tags ON links USING gin (tags);
    `,
  },
  {
    version: 5,
    name: 'stored keys and authors',
    // - `links.author`: the `id` of the stored key that created the link; NULL for the links of
    //   `API_KEYS` and of every version before. No foreign key: a link keeps its author after the
    //   key is revoked, and an import keeps the column as it comes. Indexed with `seq`: an
    //   editor's list and export read its own links newest (or oldest) first without a scan.
    // - `api_keys`: a revoked key is deleted, digest and all; nothing keeps working for it.
    //   `seq` orders keys made in the same second. Only the SHA-256 of a secret is stored.
    // - Every change but a touch (`last_used_at`) notifies the channel `api_keys_changed`, whoever
    //   made it (an instance, the command line, or psql): every instance reads the keys again
    //   (`keys.ts`). NOTIFY is sent at commit, so a listener reads what it was told about. The
    //   payload is the transaction's id, by which the instance that made the change knows its own
    //   and does not read twice. A touch is left out: every instance would read every key again
    //   each time a key is used.
    sql: `
      ALTER TABLE links ADD COLUMN author text NULL;
      CREATE INDEX links_author ON links (author, seq) WHERE author IS NOT NULL;
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        name text NOT NULL,
        role text NOT NULL CHECK (role IN ('creator', 'viewer', 'editor', 'admin')),
        domain text NULL,
        digest text NOT NULL UNIQUE,
        created_at bigint NOT NULL,
        expires_at bigint NULL,
        last_used_at bigint NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY
      );
      CREATE FUNCTION api_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM pg_notify('api_keys_changed', txid_current()::text);
          RETURN NULL;
        END
      $$;
      CREATE TRIGGER api_keys_changed
        AFTER INSERT OR DELETE OR TRUNCATE OR UPDATE OF id, name, role, domain, digest, created_at, expires_at ON api_keys
        FOR EACH STATEMENT EXECUTE PROCEDURE api_keys_changed();
    `,
  },
  {
    version: 6,
    name: 'domains',
    // - A domain's own redirects (docs/api.md, domains), one row per host that has one; '' is the
    //   default domain. A link of another domain needs no column: its key is `<host>/<code>`
    //   (links/domains.ts), so `links` is as it was.
    // - Orphan visits (docs/analytics.md): no link's, so no `link_seq`; type, browser, os and
    //   device are small numbers, as in `visits`. `id` orders the visits of one second.
    sql: `
      CREATE TABLE domain_redirects (
        host text PRIMARY KEY,
        base_url text NULL,
        not_found text NULL,
        expired text NULL
      );
      CREATE TABLE orphan_visits (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        time bigint NOT NULL,
        type smallint NOT NULL,
        domain text NULL,
        referrer text NULL,
        country text NULL,
        browser smallint NULL,
        os smallint NULL,
        device smallint NULL,
        bot boolean NOT NULL,
        visitor integer NULL
      );
      CREATE INDEX orphan_visits_time ON orphan_visits (time, id);
    `,
  },
  {
    version: 7,
    name: 'routing',
    // Where a link sends each visitor (docs/api.md: rules, validity, password): one JSON object,
    // NULL for the links that have none (nearly all), read whole with the link (store/routing.ts).
    sql: `
      ALTER TABLE links ADD COLUMN routing jsonb NULL;
    `,
  },
  {
    version: 8,
    name: 'visit rule',
    // The redirect rule that sent a visitor (docs/analytics.md): its index in the link's rules, NULL
    // for none, as every event before rules. On the parent: every month's partition gets it.
    sql: `
      ALTER TABLE visits ADD COLUMN rule smallint NULL;
    `,
  },
  {
    version: 9,
    name: 'webhooks',
    // Subscriptions, their outbox and attempts (docs/postgres.md, webhooks; claims: `webhooks.ts`);
    // `click_no` numbers a subscription's clicks for the cap (`redirect-sql.ts`).
    sql: `
      CREATE TABLE webhook_subscriptions (
        id text PRIMARY KEY,
        url text NOT NULL,
        events text[] NOT NULL,
        domain text NULL,
        secret text NOT NULL,
        created_at bigint NOT NULL,
        disabled boolean NOT NULL DEFAULT false,
        seq bigint GENERATED ALWAYS AS IDENTITY
      );
      CREATE TABLE webhook_outbox (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        subscription_id text NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
        event_id text NOT NULL,
        type text NOT NULL,
        time bigint NOT NULL,
        data text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        next_at bigint NOT NULL,
        claimed_until bigint NULL,
        click_no bigint NULL
      );
      CREATE INDEX webhook_outbox_order ON webhook_outbox (subscription_id, seq);
      CREATE INDEX webhook_outbox_clicks ON webhook_outbox (subscription_id, click_no) WHERE click_no IS NOT NULL;
      CREATE TABLE webhook_attempts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        subscription_id text NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
        at bigint NOT NULL,
        event_id text NOT NULL,
        type text NOT NULL,
        status integer NULL,
        duration_ms integer NOT NULL,
        error text NULL,
        outcome text NOT NULL CHECK (outcome IN ('delivered', 'retry', 'failed', 'disabled'))
      );
      CREATE INDEX webhook_attempts_newest ON webhook_attempts (subscription_id, id);
      CREATE TABLE webhook_counters (one boolean PRIMARY KEY DEFAULT true CHECK (one), dropped_clicks bigint NOT NULL DEFAULT 0);
      INSERT INTO webhook_counters DEFAULT VALUES;
    `,
  },
];

/**
 * Keys of the advisory locks: migrations, the background deletion of expired links, the creation
 * of the months of `visits`, and the deletion of events past their retention (which the builders
 * of day summaries hold shared, see `visit-days.ts`).
 */
const MIGRATION_LOCK = 0x75726c5f6d6967n; // "url_mig"
export const REAPER_LOCK = 0x75726c5f726561n; // "url_rea"
export const PARTITION_LOCK = 0x75726c5f706172n; // "url_par"
export const RETENTION_LOCK = 0x75726c5f726574n; // "url_ret"

/** Applies the migrations this database lacks (guarded: begin.ts); resolves with the versions applied now. */
export async function migrate(sql: postgres.Sql, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  return beginGuarded(sql, '', async (tx) => {
    // Waiting for another instance's migrations is not a slow statement: allow it a minute.
    await tx`SET LOCAL statement_timeout = 60000`;
    // Held until this transaction ends: instances starting together take turns.
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK.toString()}::bigint)`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version int PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`;
    const done = new Set((await tx<{ version: number }[]>`SELECT version FROM schema_migrations`).map((r) => r.version));
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await tx.unsafe(m.sql);
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`;
      applied.push(m.version);
    }
    return applied;
  });
}
