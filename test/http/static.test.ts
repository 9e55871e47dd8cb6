import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { etagMatches } from '../../src/api/ui-routes.ts';
import { loadStatic } from '../../src/http/static.ts';
import { start, tempDir } from '../support/helpers.ts';

test('If-None-Match: exact tag, weak form, list and * match; others do not', () => {
  const tag = '"abc"';
  assert.equal(etagMatches(undefined, tag), false);
  assert.equal(etagMatches('"abc"', tag), true);
  assert.equal(etagMatches('W/"abc"', tag), true);
  assert.equal(etagMatches('"x", "abc"', tag), true);
  assert.equal(etagMatches('*', tag), true);
  assert.equal(etagMatches('"abcd"', tag), false);
  assert.equal(etagMatches('abc', tag), false);
});

test('loadStatic reads nested files with content types and skips hidden ones', () => {
  const dir = tempDir();
  mkdirSync(join(dir, 'img'));
  writeFileSync(join(dir, 'app.js'), 'x');
  writeFileSync(join(dir, 'img', 'logo.svg'), '<svg/>');
  writeFileSync(join(dir, '.secret'), 'no');
  writeFileSync(join(dir, 'data.bin'), 'b');
  const files = loadStatic(dir);
  assert.deepEqual([...files.keys()].sort(), ['app.js', 'data.bin', 'img/logo.svg']);
  assert.equal(files.get('app.js')!.type, 'text/javascript; charset=utf-8');
  assert.equal(files.get('img/logo.svg')!.type, 'image/svg+xml');
  assert.equal(files.get('data.bin')!.type, 'application/octet-stream');
  assert.match(files.get('app.js')!.etag, /^"[\w-]{27}"$/);
  assert.equal(loadStatic(join(dir, 'missing')).size, 0);
});

test('nested static files are served; a path climbing out of /static/ is refused', async (t) => {
  const dir = tempDir();
  mkdirSync(join(dir, 'img'));
  writeFileSync(join(dir, 'img', 'logo.svg'), '<svg/>');
  const h = await start(t, { staticDir: dir });
  const ok = await h.req('/static/img/logo.svg');
  assert.equal(ok.status, 200);
  assert.equal(ok.body, '<svg/>');
  assert.equal((await h.req('/static/img/../../package.json')).status, 400);
  assert.equal((await h.req('/static/%2e%2e/package.json')).status, 400);
  assert.equal((await h.req('/static/img%2Flogo.svg')).status, 400);
  assert.equal((await h.req('/static/nope.css')).status, 404);
});
