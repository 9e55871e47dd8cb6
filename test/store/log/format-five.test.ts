/**
 * Format 5 (stored API keys, a link's author; docs/storage.md and docs/upgrade.md): a log of
 * format 4 opens with every link as it was, is rewritten as the current format right after
 * start-up, before anything is appended, and takes keys and authors from then on. A log of format 5
 * is rewritten as the current format too (format 6: a domain's redirects, orphan visits; format 7:
 * a link's routing), its links, keys and authors kept, and takes a domain's redirects only once it
 * says the current format.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import type { KeyRecord } from '../../../src/store/key-store.ts';
import { encodeEntry, FORMAT_VERSION } from '../../../src/store/log/format.ts';
import { LOG_FILE, LogEngine } from '../../../src/store/log/log-engine.ts';
import { LogLinkStore } from '../../../src/store/log/log-link-store.ts';
import { LogCapture, tempDir } from '../../support/helpers.ts';
import { logEntries, logVersion } from '../../support/log-entries.ts';
import { linkRecord as rec, T } from '../../support/records.ts';

const MANUAL = { compactMinBytes: Number.MAX_SAFE_INTEGER, visitFlushMs: 60_000 };

const admin: KeyRecord = {
  id: 'adm1n_00',
  name: 'initial',
  role: 'admin',
  domain: null,
  digest: 'c'.repeat(64),
  createdAt: T,
  expiresAt: null,
  lastUsedAt: null,
};

/** A log as a build of format 4 wrote it: its version line, creates (plain, limited, labelled), an edit, a delete, a count batch. */
function v4Log(): Buffer {
  return Buffer.concat([
    encodeEntry({ op: 'F', name: 'url-shortener-log', version: 4 }),
    encodeEntry({ op: 'C', code: 'plain1', url: 'https://example.com/plain1', createdAt: T, retentionDays: 0, visits: 0 }),
    encodeEntry({ op: 'C', code: 'limit1', url: 'https://example.com/limit1', createdAt: T, retentionDays: 0, visits: 2, maxVisits: 10 }),
    encodeEntry({ op: 'C', code: 'label1', url: 'https://example.com/label1', createdAt: T, retentionDays: 0, visits: 0, title: 'Sale', tags: ['a', 'b'] }),
    encodeEntry({ op: 'C', code: 'gone01', url: 'https://example.com/gone01', createdAt: T, retentionDays: 0, visits: 0 }),
    encodeEntry({ op: 'E', code: 'plain1', url: 'https://example.org/edited', retentionDays: 0, maxVisits: null, tags: ['x'] }),
    encodeEntry({ op: 'D', code: 'gone01' }),
    encodeEntry({ op: 'V', counts: [['plain1', 5]] }),
  ]);
}

const expected = [
  rec('plain1', { url: 'https://example.org/edited', tags: ['x'], visits: 5, untracked: 5 }),
  rec('limit1', { visits: 2, untracked: 2, maxVisits: 10 }),
  rec('label1', { title: 'Sale', tags: ['a', 'b'] }),
];

function open(dir: string, logs = new LogCapture()): { engine: LogEngine; store: LogLinkStore } {
  const engine = new LogEngine({ dir, fsync: 'always', log: createLogger('info', logs), ...MANUAL });
  return { engine, store: new LogLinkStore(engine) };
}

test('a format 4 log opens with its links, and is the current format after start-up, before anything is appended', async (t) => {
  assert.equal(FORMAT_VERSION, 8);
  const dir = tempDir(t);
  writeFileSync(join(dir, LOG_FILE), v4Log());
  const logs = new LogCapture();
  let { engine, store } = open(dir, logs);
  t.after(() => engine.close());
  const read = (s: LogLinkStore) => ['plain1', 'limit1', 'label1', 'gone01'].map((code) => s.get(code, T));
  assert.deepEqual(read(store), [...expected, undefined], 'read as before');
  assert.deepEqual(store.accessKeys.keys(), [], 'no key in a log of format 4');
  // The rewrite is queued at start-up: a close waits for it.
  await engine.close();
  assert.equal(logVersion(dir), FORMAT_VERSION);
  assert.deepEqual(
    logEntries(dir).map((e) => (e.op === 'C' ? e.code : e.op)),
    ['plain1', 'limit1', 'label1'],
    'rewritten from memory: one create per link',
  );
  assert.equal(logs.lines.filter((l) => /rewritten with its format version line/.test(String(l['msg']))).length, 1, 'one info line');

  ({ engine, store } = open(dir));
  assert.deepEqual(read(store), [...expected, undefined], 'reopened');
  await store.accessKeys.addKey(admin);
  await store.insert(rec('new001', { author: admin.id }), T);
  await engine.close();
  ({ engine, store } = open(dir));
  assert.deepEqual(store.accessKeys.keys(), [admin]);
  assert.deepEqual(store.get('new001', T), rec('new001', { author: admin.id }));
  assert.match(readFileSync(join(dir, LOG_FILE), 'utf8'), new RegExp(`^[0-9a-f]{8} F\turl-shortener-log\t${FORMAT_VERSION}\n`));
});

test('a format 4 log gets no key line before it is rewritten: a key added at once waits for the rewrite', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, LOG_FILE), v4Log());
  const { engine, store } = open(dir);
  t.after(() => engine.close());
  await store.accessKeys.addKey(admin);
  assert.equal(logVersion(dir), FORMAT_VERSION);
  assert.deepEqual(
    logEntries(dir).map((e) => (e.op === 'C' ? e.code : e.op)),
    ['plain1', 'limit1', 'label1', 'A'],
  );
});

const viewer: KeyRecord = { ...admin, id: 'v1ewer_0', name: 'reader', role: 'viewer', digest: 'd'.repeat(64), lastUsedAt: T + 5 };

/** A log as a build of format 5 wrote it: its version line, two keys (one used since), links with and without an author, an edit, a delete, a count batch. */
function v5Log(): Buffer {
  return Buffer.concat([
    encodeEntry({ op: 'F', name: 'url-shortener-log', version: 5 }),
    encodeEntry({ op: 'A', key: admin }),
    encodeEntry({ op: 'A', key: { ...viewer, lastUsedAt: null } }),
    encodeEntry({ op: 'C', code: 'plain1', url: 'https://example.com/plain1', createdAt: T, retentionDays: 0, visits: 0 }),
    encodeEntry({ op: 'C', code: 'auth01', url: 'https://example.com/auth01', createdAt: T, retentionDays: 0, visits: 0, author: admin.id }),
    encodeEntry({
      op: 'C',
      code: 'auth02',
      url: 'https://example.com/auth02',
      createdAt: T,
      retentionDays: 0,
      visits: 1,
      maxVisits: 3,
      title: 'Sale',
      tags: ['a'],
      author: admin.id,
    }),
    encodeEntry({ op: 'C', code: 'gone01', url: 'https://example.com/gone01', createdAt: T, retentionDays: 0, visits: 0, author: admin.id }),
    encodeEntry({ op: 'E', code: 'auth01', url: 'https://example.org/edited', retentionDays: 0, maxVisits: null, tags: ['x'] }),
    encodeEntry({ op: 'D', code: 'gone01' }),
    encodeEntry({ op: 'U', id: viewer.id, at: T + 5 }),
    encodeEntry({ op: 'V', counts: [['plain1', 5]] }),
  ]);
}

const expected5 = [
  rec('plain1', { visits: 5, untracked: 5 }),
  rec('auth01', { url: 'https://example.org/edited', tags: ['x'], author: admin.id }),
  rec('auth02', { visits: 1, untracked: 1, maxVisits: 3, title: 'Sale', tags: ['a'], author: admin.id }),
];

const redirects = { baseUrl: 'https://www.example.com/', notFound: null, expired: 'https://www.example.com/expired' };

test('a format 5 log opens with its links, keys and authors, and is the current format after start-up, all of them kept', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, LOG_FILE), v5Log());
  const logs = new LogCapture();
  let { engine, store } = open(dir, logs);
  t.after(() => engine.close());
  const read = (s: LogLinkStore) => ['plain1', 'auth01', 'auth02', 'gone01'].map((code) => s.get(code, T));
  assert.deepEqual(read(store), [...expected5, undefined], 'read as before');
  assert.deepEqual(store.accessKeys.keys(), [admin, viewer], 'its keys, the last use kept');
  assert.equal((await store.domains.domainRedirects()).size, 0, 'no domain redirect in a log of format 5');
  await engine.close();
  assert.equal(logVersion(dir), FORMAT_VERSION);
  assert.deepEqual(
    logEntries(dir).map((e) => (e.op === 'C' ? e.code : e.op)),
    ['A', 'A', 'plain1', 'auth01', 'auth02'],
    'rewritten from memory: one line per key, one create per link',
  );
  assert.equal(logs.lines.filter((l) => /rewritten with its format version line/.test(String(l['msg']))).length, 1, 'one info line');

  ({ engine, store } = open(dir));
  assert.deepEqual(read(store), [...expected5, undefined], 'reopened: every link and author');
  assert.deepEqual(store.accessKeys.keys(), [admin, viewer], 'reopened: every key');
  await store.domains.setDomainRedirects('', redirects);
  await engine.close();
  ({ engine, store } = open(dir));
  assert.deepEqual([...(await store.domains.domainRedirects())], [['', redirects]], 'a domain redirect taken from then on');
  assert.deepEqual(read(store), [...expected5, undefined]);
  assert.match(readFileSync(join(dir, LOG_FILE), 'utf8'), new RegExp(`^[0-9a-f]{8} F\turl-shortener-log\t${FORMAT_VERSION}\n`));
});

test('a format 5 log gets no domain line before it is rewritten: a redirect set at once waits for the rewrite', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, LOG_FILE), v5Log());
  const { engine, store } = open(dir);
  t.after(() => engine.close());
  await store.domains.setDomainRedirects('go.example', redirects);
  assert.equal(logVersion(dir), FORMAT_VERSION);
  assert.deepEqual(
    logEntries(dir).map((e) => (e.op === 'C' ? e.code : e.op)),
    ['A', 'A', 'plain1', 'auth01', 'auth02', 'H'],
  );
});
