/**
 * A link's author on PostgreSQL (docs/postgres.md, migration 5): written by every insert (a batch,
 * and the insert that takes an expired link's code), read back by every read of a record (one
 * link, the newest of a URL, a page, a long list in chunks, the export), kept by edits; and a
 * database of the schema before (migration 4) upgraded at start-up, its links without an author.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import postgres from 'postgres';
import { createLogger } from '../../../src/log.ts';
import type { LinkStore } from '../../../src/store/link-store.ts';
import { openPostgresStore } from '../../../src/store/postgres/connect.ts';
import { MIGRATIONS, migrate } from '../../../src/store/postgres/schema.ts';
import { pgServer } from '../../support/pg.ts';
import { linkRecord as rec, T } from '../../support/records.ts';

const quiet = createLogger('silent');
const server = await pgServer();
const QUIET_JOBS = { readyCheckMs: 0, reapIntervalMs: 0, countRefreshMs: 0, visitJobsMs: 0 } as const;

async function database(t: { after: (fn: () => Promise<void>) => void }): Promise<{ url: string; db: postgres.Sql }> {
  const url = await server!.createDatabase();
  const db = postgres(url, { max: 1, onnotice: () => undefined });
  t.after(async () => {
    await db.end({ timeout: 1 });
    await server!.dropDatabase(url);
  });
  return { url, db };
}

/** Code → author of every record read by a whole list (chunks of 2 over a held snapshot) and by the export. */
async function authorsRead(store: LinkStore): Promise<{ list: Record<string, string | undefined>; exported: Record<string, string | undefined> }> {
  const page = await store.list({ offset: 0, now: T });
  const list: Record<string, string | undefined> = {};
  try {
    for (let i = 0; i < page.count; i++) for (const r of await page.slice(i, i + 1)) list[r.code] = r.author ?? undefined;
  } finally {
    page.release();
  }
  const exported: Record<string, string | undefined> = {};
  for await (const r of store.exportAll(T)) exported[r.code] = r.author ?? undefined;
  return { list, exported };
}

test("a link's author: written by every insert, read by every read, kept by edits", { skip: !server }, async (t) => {
  const { url, db } = await database(t);
  const store = await openPostgresStore({ url, poolSize: 3, log: quiet, chunk: 2, ...QUIET_JOBS });
  t.after(() => store.close());
  const authored = rec('auth01', { author: 'AbCd_-12' });
  assert.equal(await store.insert(authored, T), true);
  assert.equal(await store.insert(rec('auth02', { author: null }), T), true);
  assert.equal(await store.insert(rec('auth03', { url: authored.url }), T), true);
  // An expired link's code taken by a new link: the insert of its own transaction.
  assert.equal(await store.insert(rec('auth04', { createdAt: T - 10 * 86400, retentionDays: 1 }), T), true);
  assert.equal(await store.insert(rec('auth04', { author: 'Ef_Gh-34', title: 'taken' }), T), true);
  assert.equal(await store.insert(rec('auth05', { author: 'AbCd_-12' }), T), true);

  assert.deepEqual(await store.get('auth01', T), authored, 'the author comes back');
  assert.deepEqual(await store.get('auth02', T), rec('auth02'), 'none: no author in the record, as every store answers');
  assert.equal((await store.get('auth04', T))?.author, 'Ef_Gh-34');
  assert.equal((await store.newestByUrl('https://example.com/auth05', T))?.author, 'AbCd_-12');
  assert.equal((await store.newestByUrl(authored.url, T))?.code, 'auth03');
  const page = await store.list({ offset: 0, limit: 10, now: T });
  assert.deepEqual(
    (await page.slice(0, page.count)).map((r) => [r.code, r.author]),
    [
      ['auth05', 'AbCd_-12'],
      ['auth04', 'Ef_Gh-34'],
      ['auth03', undefined],
      ['auth02', undefined],
      ['auth01', 'AbCd_-12'],
    ],
  );
  const authors = { auth01: 'AbCd_-12', auth02: undefined, auth03: undefined, auth04: 'Ef_Gh-34', auth05: 'AbCd_-12' };
  assert.deepEqual(await authorsRead(store), { list: authors, exported: authors });

  const edited = await store.update('auth01', { url: 'https://example.com/moved', title: 'moved', tags: ['x'], maxVisits: 5, retentionDays: 30 }, T);
  assert.equal(edited?.author, 'AbCd_-12', 'an edit answers with the author');
  assert.equal((await store.update('auth01', {}, T))?.author, 'AbCd_-12');
  assert.equal((await store.get('auth01', T))?.author, 'AbCd_-12', 'and keeps it');
  const [row] = await db<{ author: string | null }[]>`SELECT author FROM links WHERE code = 'auth02'`;
  assert.equal(row?.author, null, 'none is NULL in the table');
});

test('a database of the schema before keys (migration 4): upgraded at start-up, its links without an author, keys stored', { skip: !server }, async (t) => {
  const { url, db } = await database(t);
  assert.deepEqual(await migrate(db, MIGRATIONS.slice(0, 4)), [1, 2, 3, 4]);
  await db`INSERT INTO links (code, url, created_at, retention_days, title, title_folded, tags)
    VALUES ('before', 'https://example.com/before', ${T}, 0, 'Old', 'old', '{a}')`;
  const store = await openPostgresStore({ url, poolSize: 2, log: quiet, ...QUIET_JOBS });
  t.after(() => store.close());
  assert.deepEqual(await store.get('before', T), rec('before', { url: 'https://example.com/before', title: 'Old', tags: ['a'] }));
  assert.equal(await store.insert(rec('after1', { author: 'NewKey01' }), T), true);
  assert.equal((await store.get('after1', T))?.author, 'NewKey01');
  const k = {
    id: 'NewKey01',
    name: 'first',
    role: 'admin',
    domain: null,
    digest: '0'.repeat(64),
    createdAt: T,
    expiresAt: null,
    lastUsedAt: null,
  } as const;
  await store.accessKeys.addKey(k);
  assert.deepEqual(await store.accessKeys.keys(), [k]);
  const versions = await db<{ version: number; name: string }[]>`SELECT version, name FROM schema_migrations ORDER BY version`;
  assert.deepEqual(
    versions.map((v) => v.version),
    [1, 2, 3, 4, 5, 6, 7, 8, 9],
    'every migration after 4 applied at start-up',
  );
  assert.equal(versions[4]?.name, 'stored keys and authors');
  assert.equal(versions[5]?.name, 'domains');
  assert.equal(versions[6]?.name, 'routing');
  assert.equal(versions[7]?.name, 'visit rule');
  assert.equal(versions[8]?.name, 'webhooks');
  assert.deepEqual(await migrate(db), [], 'the migrations are done once');
  const columns = await db<{ column_name: string; is_nullable: string; data_type: string }[]>`
    SELECT column_name, is_nullable, data_type FROM information_schema.columns WHERE table_name = 'api_keys' ORDER BY ordinal_position`;
  assert.deepEqual(
    columns.map((c) => `${c.column_name} ${c.data_type} ${c.is_nullable === 'YES' ? 'null' : 'not null'}`),
    [
      'id text not null',
      'name text not null',
      'role text not null',
      'domain text null',
      'digest text not null',
      'created_at bigint not null',
      'expires_at bigint null',
      'last_used_at bigint null',
      'seq bigint not null',
    ],
    'no column for a secret: only its digest',
  );
});
