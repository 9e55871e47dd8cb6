/**
 * Regression (issue 43): a request string that names a property every plain object inherits
 * (`__proto__`, `constructor`, `valueOf`, `hasOwnProperty`…) is no key of a table. Shlink's
 * `orderBy=__proto__-ASC` on the tag stats was a 500 (`constructor-ASC` was even accepted, and
 * sorted nothing); an import whose `Content-Type` was `__proto__` or `constructor` was read as JSON
 * Lines instead of refused; `export-visits constructor x` took `x` as the value of a filter named
 * by the function `Object`. Each is now the answer any other unknown value gets, and the router
 * finds no handler for a method named so.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseTransferCommand } from '../../src/cli/transfer-commands.ts';
import { createRouter } from '../../src/http/router.ts';
import { start } from '../support/helpers.ts';

const KEY = 'k1';

/** Every name `Object.prototype` gives a plain object, and the legacy ones. */
const INHERITED = [
  '__proto__',
  'constructor',
  'valueOf',
  'hasOwnProperty',
  'toString',
  'toLocaleString',
  'isPrototypeOf',
  'propertyIsEnumerable',
  '__defineGetter__',
  '__lookupSetter__',
];

const invalidOrder = (fields: string): string =>
  JSON.stringify({
    type: 'https://shlink.io/api/error/invalid-data',
    title: 'Invalid data',
    detail: `orderBy must be one of ${fields}, followed by -ASC or -DESC`,
    status: 400,
    invalidElements: ['orderBy'],
  });

test('Shlink orderBy naming an inherited property is invalid-data (400), on the tags, their stats and the short URL list', async (t) => {
  const h = await start(t, { shlinkApi: true, apiKeys: [KEY], logLevel: 'warn' });
  const created = await h.req('/rest/v3/short-urls', {
    method: 'POST',
    headers: { 'x-api-key': KEY },
    body: JSON.stringify({ longUrl: 'https://example.com/a', tags: ['x', 'y'] }),
  });
  assert.equal(created.status, 200, created.body);
  const expected: [path: string, fields: string][] = [
    ['/rest/v3/tags/stats', 'tag, shortUrlsCount, visits, nonBotVisits'],
    ['/rest/v3/tags', 'tag'],
    ['/rest/v3/short-urls', 'dateCreated, shortCode, longUrl, title, visits, nonBotVisits'],
  ];
  for (const [path, fields] of expected) {
    for (const name of INHERITED) {
      for (const dir of ['ASC', 'DESC']) {
        const r = await h.req(`${path}?orderBy=${encodeURIComponent(`${name}-${dir}`)}`, { headers: { 'x-api-key': KEY } });
        const what = `${path} orderBy=${name}-${dir}`;
        assert.equal(r.status, 400, `${what}: ${r.body}`);
        assert.equal(r.headers['content-type'], 'application/problem+json', what);
        assert.equal(r.body, invalidOrder(fields), what);
      }
    }
  }
  // The real fields still order.
  const stats = await h.req('/rest/v3/tags/stats?orderBy=tag-DESC', { headers: { 'x-api-key': KEY } });
  assert.equal(stats.status, 200, stats.body);
  assert.deepEqual(
    (JSON.parse(stats.body) as { tags: { data: { tag: string }[] } }).tags.data.map((d) => d.tag),
    ['y', 'x'],
  );
});

test('an import whose Content-Type names an inherited property is 415, like any other unsupported type', async (t) => {
  const h = await start(t, { apiKeys: [KEY], logLevel: 'warn' });
  for (const path of ['/api/import', '/api/visits/import']) {
    for (const name of INHERITED) {
      const type = name.toLowerCase();
      const r = await h.req(path, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': name }, body: '{"url":"https://example.com/a"}\n' });
      assert.equal(r.status, 415, `${path} ${name}: ${r.body}`);
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(
        r.body,
        JSON.stringify({ detail: `unsupported content type ${type}; send application/x-ndjson (JSON Lines) or text/csv` }),
        `${path} ${name}`,
      );
    }
  }
  const listed = await h.req('/api/urls', { headers: { 'x-api-key': KEY } });
  assert.equal(listed.headers['x-total-count'], '0', 'nothing was imported');
});

test("the router: a method naming an inherited property has no handler (405 with the route's Allow)", () => {
  const match = createRouter<string>([{ path: '/x', methods: { GET: 'get' } }]);
  for (const name of INHERITED) {
    const found = match(name, ['x']);
    assert.equal(found?.handler, undefined, name);
    assert.equal(found?.allow, 'GET, HEAD, OPTIONS', name);
  }
  assert.equal(match('GET', ['x'])?.handler, 'get');
  assert.equal(match('HEAD', ['x'])?.handler, 'get');
});

test('export-visits: an argument naming an inherited property is no filter option, but a setting like any other', () => {
  for (const name of INHERITED) {
    assert.deepEqual(
      parseTransferCommand(['export-visits', name, 'x']),
      { command: 'export-visits', file: undefined, format: undefined, databaseUrl: undefined, fromLine: 1, settings: [name, 'x'] },
      name,
    );
  }
});
