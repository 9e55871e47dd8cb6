/**
 * `openShortener(options).start(port)`: `createShortener` in two steps, so a server can load every
 * link before it opens its port and still name the port it got (PORT=0) in the default base URL.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { createShortener, openShortener } from '../../src/app.ts';
import * as entry from '../../src/index.ts';
import { tempDir } from '../support/helpers.ts';

test('the links are loaded by openShortener; start(port) names the port in the default base URL, once', async (t) => {
  const dir = tempDir(t);
  const first = createShortener({ dataDir: dir, fsync: 'off', logLevel: 'silent' });
  await first.service.shorten({ url: 'https://example.com/kept', retentionDays: undefined });
  await first.close();

  const opened = openShortener({ dataDir: dir, fsync: 'off', logLevel: 'silent', port: 0 });
  assert.equal(opened.count, 1, 'loaded before any handler exists');
  const shortener = opened.start(43210);
  t.after(() => shortener.close());
  assert.equal(shortener.config.baseUrl, 'http://localhost:43210');
  assert.equal(shortener.config.port, 43210);
  assert.equal(shortener.count, 1);
  assert.throws(() => opened.start(43211), /already been started/);
});

test('start() without a port uses the port option; a base URL given is kept', async (t) => {
  const [a, b] = [tempDir(), tempDir()];
  t.after(() => {
    for (const d of [a, b]) rmSync(d, { recursive: true, force: true });
  });
  const byOption = openShortener({ dataDir: a, fsync: 'off', logLevel: 'silent', port: 8081 }).start();
  t.after(() => byOption.close());
  assert.equal(byOption.config.baseUrl, 'http://localhost:8081');
  const given = openShortener({ dataDir: b, fsync: 'off', logLevel: 'silent', baseUrl: 'https://s.example/x' }).start(43210);
  t.after(() => given.close());
  assert.equal(given.config.baseUrl, 'https://s.example/x');
});

test('close() of a shortener never started releases the data dir', async (t) => {
  const dir = tempDir(t);
  const opened = openShortener({ dataDir: dir, fsync: 'off', logLevel: 'silent' });
  assert.throws(() => openShortener({ dataDir: dir, fsync: 'off', logLevel: 'silent' }), /already open/);
  await opened.close();
  const again = openShortener({ dataDir: dir, fsync: 'off', logLevel: 'silent' });
  await again.close();
});

test('the package entry exports openShortener', () => {
  assert.equal(entry.openShortener, openShortener);
});
