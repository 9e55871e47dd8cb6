/**
 * YOURLS' API (docs/compat.md#yourls-api), action by action, through HTTP with `yourls_api` on:
 * every action in every format, with YOURLS 1.10's fields, order, messages and statuses; its
 * refusals of a shorturl (a URL already shortened, a taken keyword, a bad URL, a link to itself);
 * JSONP's callback rules; an unknown action.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start, type Harness } from '../support/helpers.ts';
import { api, assertAnswer, assertEveryFormat, CALLBACK, FORMATS, inFormat, phpJson, TYPES } from '../support/yourls.ts';
import { readXml } from '../support/xml.ts';

const KEY = 'yourls-key-1';
const SIGNED = { signature: KEY };
/** The fixed clock of these tests, and how YOURLS shows it. */
const NOW = Date.UTC(2030, 0, 2, 3, 4, 5);
const DATE = '2030-01-02 03:04:05';

async function setup(t: Parameters<typeof start>[0]): Promise<{ h: Harness; base: string }> {
  const h = await start(t, { yourlsApi: true, apiKeys: [KEY], now: () => NOW });
  return { h, base: h.shortener.config.baseUrl };
}

test('shorturl in every format: 200 and the new link, with its keyword, title and date', async (t) => {
  const { h, base } = await setup(t);
  for (const format of FORMATS) {
    const keyword = `new-${format}`;
    const url = `https://example.com/${format}?a=1&b=2`;
    const reply = await api(h, inFormat({ ...SIGNED, action: 'shorturl', url, keyword, title: `The ${format} page` }, format));
    const title = `The ${format} page`;
    assertAnswer(reply, format, {
      status: 200,
      fields: {
        status: 'success',
        code: '',
        message: `${url} added to database`,
        errorCode: '',
        statusCode: '200',
        url: { keyword, url, title, date: DATE, ip: '' },
        title,
        shorturl: `${base}/${keyword}`,
      },
      simple: `${base}/${keyword}`,
    });
    const stored = await h.shortener.service.get(keyword);
    assert.ok(stored.ok);
    assert.equal(stored.record.original_url, url);
  }
});

test('shorturl without a keyword generates a code; the message trims a URL past 60 characters as YOURLS does', async (t) => {
  const { h, base } = await setup(t);
  const url = `https://example.com/${'x'.repeat(60)}`;
  const reply = await api(h, { ...SIGNED, action: 'shorturl', url, format: 'json' });
  assert.equal(reply.status, 200, reply.body);
  const body = JSON.parse(reply.body) as { message: string; shorturl: string; url: { keyword: string; title: string } };
  assert.equal(body.message, `${url.slice(0, 55)}[...] added to database`);
  assert.match(body.url.keyword, /^[1-9A-HJ-NP-Za-km-z]{6}$/);
  assert.equal(body.shorturl, `${base}/${body.url.keyword}`);
  // No title given: YOURLS would fetch the page's and keep the URL when it finds none; nothing is fetched here.
  assert.equal(body.url.title, url);
  const redirect = await h.req(`/${body.url.keyword}`);
  assert.equal(redirect.status, 302);
  assert.equal(redirect.headers.location, url);
});

test('expand and url-stats in every format, by code or by short URL; an unknown link is 404', async (t) => {
  const { h, base } = await setup(t);
  const url = 'https://example.com/expand-me';
  const code = await h.shorten(url);
  await h.req(`/${code}`);
  await h.req(`/${code}`);
  for (const shorturl of [code, `${base}/${code}`]) {
    await assertEveryFormat(
      h,
      { ...SIGNED, action: 'expand', shorturl },
      {
        status: 200,
        fields: { keyword: code, shorturl: `${base}/${code}`, longurl: url, title: url, message: 'success', statusCode: '200' },
        simple: url,
      },
    );
    await assertEveryFormat(
      h,
      { ...SIGNED, action: 'url-stats', shorturl },
      {
        status: 200,
        fields: {
          statusCode: '200',
          message: 'success',
          link: { shorturl: `${base}/${code}`, url, title: url, timestamp: DATE, ip: '', clicks: 2 },
        },
        simple: 'Need either XML or JSON format for stats',
      },
    );
  }
  await assertEveryFormat(
    h,
    { ...SIGNED, action: 'expand', shorturl: 'nope42' },
    {
      status: 404,
      fields: { keyword: 'nope42', message: 'Error: short URL not found', errorCode: '404' },
      simple: 'not found',
    },
  );
  await assertEveryFormat(
    h,
    { ...SIGNED, action: 'url-stats', shorturl: `${base}/nope42` },
    {
      status: 404,
      fields: { statusCode: '404', message: 'Error: short URL not found' },
      simple: 'Need either XML or JSON format for stats',
    },
  );
});

test('stats, db-stats and version in every format', async (t) => {
  const { h, base } = await setup(t);
  const first = await h.shorten('https://example.com/one');
  const second = await h.shorten('https://example.com/two');
  for (let i = 0; i < 3; i++) await h.req(`/${first}`);
  const link = (code: string, url: string, clicks: number) => ({ shorturl: `${base}/${code}`, url, title: url, timestamp: DATE, ip: '', clicks });
  await assertEveryFormat(
    h,
    { ...SIGNED, action: 'stats', filter: 'top', limit: '5' },
    {
      status: 200,
      fields: {
        links: { link_1: link(first, 'https://example.com/one', 3), link_2: link(second, 'https://example.com/two', 0) },
        stats: { total_links: 2, total_clicks: 3 },
        statusCode: '200',
        message: 'success',
      },
      simple: 'Need either XML or JSON format for stats',
    },
  );
  await assertEveryFormat(
    h,
    { ...SIGNED, action: 'db-stats' },
    {
      status: 200,
      fields: { 'db-stats': { total_links: 2, total_clicks: 3 }, statusCode: '200', message: 'success' },
      simple: 'Need either XML or JSON format for stats',
    },
  );
  await assertEveryFormat(h, { ...SIGNED, action: 'version' }, { status: 200, fields: { version: '1.10.4' }, simple: '1.10.4' });
  await assertEveryFormat(h, { ...SIGNED, action: 'version', db: '1' }, { status: 200, fields: { version: '1.10.4', db_version: '507' }, simple: '1.10.4' });
});

test("without a format the answer is XML, YOURLS' default", async (t) => {
  const { h } = await setup(t);
  const reply = await api(h, { ...SIGNED, action: 'version' });
  assert.equal(reply.status, 200);
  assert.equal(reply.headers['content-type'], TYPES.xml);
  assert.equal(reply.body, '<?xml version="1.0" encoding="UTF-8"?>\n<root><version>1.10.4</version></root>\n');
  // An unknown format is plain text, as YOURLS' output falls back to it.
  const other = await api(h, { ...SIGNED, action: 'version', format: 'yaml' });
  assert.deepEqual([other.status, other.headers['content-type'], other.body], [200, TYPES.simple, '1.10.4']);
});

test("a missing or unknown action is 400 in YOURLS' shape", async (t) => {
  const { h } = await setup(t);
  const expected = {
    status: 400,
    fields: { errorCode: '400', message: 'Unknown or missing "action" parameter' },
    simple: 'Unknown or missing "action" parameter',
  };
  await assertEveryFormat(h, { ...SIGNED }, expected);
  await assertEveryFormat(h, { ...SIGNED, action: 'delete' }, expected);
  // Only the action's own name: no property of an object is an action.
  await assertEveryFormat(h, { ...SIGNED, action: 'constructor' }, expected);
});

test('a URL already shortened is 400 error:url naming its newest link, in every format; nothing is stored', async (t) => {
  const { h, base } = await setup(t);
  const url = 'https://example.com/twice';
  await h.shorten(url);
  const newest = await h.shorten(url);
  for (let i = 0; i < 4; i++) await h.req(`/${newest}`);
  const before = h.shortener.count;
  const host = base.replace('http://', '');
  for (const format of FORMATS) {
    // The spelling sent is normalized before it is compared, as the lookup does; a new keyword does not help.
    const reply = await api(h, inFormat({ ...SIGNED, action: 'shorturl', url: 'HTTPS://EXAMPLE.com/twice', keyword: `again-${format}` }, format));
    assertAnswer(reply, format, {
      status: 400,
      fields: {
        status: 'fail',
        code: 'error:url',
        message: `${url} already exists in database (short URL: ${host}/${newest})`,
        errorCode: '400',
        statusCode: '400',
        url: { keyword: newest, url, title: url, date: DATE, ip: '', clicks: 4 },
        title: url,
        shorturl: `${base}/${newest}`,
      },
      simple: `${base}/${newest}`,
    });
  }
  assert.equal(h.shortener.count, before);
  // The REST API still gives the same URL another code.
  const third = await h.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
  assert.equal(third.status, 201);
});

test('a keyword already taken is 400 error:keyword; the link keeps its URL', async (t) => {
  const { h } = await setup(t);
  await api(h, { ...SIGNED, action: 'shorturl', url: 'https://example.com/first', keyword: 'taken1' });
  for (const format of FORMATS) {
    const reply = await api(h, inFormat({ ...SIGNED, action: 'shorturl', url: `https://example.com/other-${format}`, keyword: 'taken1' }, format));
    assertAnswer(reply, format, {
      status: 400,
      fields: {
        status: 'fail',
        code: 'error:keyword',
        message: 'Short URL taken1 already exists in database or is reserved',
        errorCode: '400',
        statusCode: '400',
      },
      simple: '',
    });
  }
  const kept = await h.shortener.service.get('taken1');
  assert.ok(kept.ok);
  assert.equal(kept.record.original_url, 'https://example.com/first');
});

test('a missing or malformed URL is error:nourl, a link to this service error:noloop; a bad keyword or title is refused with the reason', async (t) => {
  const { h, base } = await setup(t);
  const fail = (code: string, message: string) => ({ status: 400, fields: { status: 'fail', code, message, errorCode: '400', statusCode: '400' }, simple: '' });
  const noUrl = fail('error:nourl', 'Missing or malformed URL');
  for (const url of [undefined, '', 'not a url', 'ftp://example.com/file', 'javascript:alert(1)', 'https://user:pw@example.com/']) {
    const params: Record<string, string> = { ...SIGNED, action: 'shorturl' };
    if (url !== undefined) params['url'] = url;
    for (const format of FORMATS) assertAnswer(await api(h, inFormat(params, format)), format, noUrl);
  }
  for (const format of FORMATS) {
    assertAnswer(await api(h, inFormat({ ...SIGNED, action: 'shorturl', url: `${base}/abcdef` }, format)), format, fail('error:noloop', 'URL is a short URL'));
  }
  const refused = async (params: Record<string, string>, code: string, reason: RegExp) => {
    const reply = await api(h, { ...SIGNED, action: 'shorturl', format: 'json', ...params });
    assert.equal(reply.status, 400, reply.body);
    const body = JSON.parse(reply.body) as Record<string, string>;
    assert.deepEqual(Object.keys(body), ['status', 'code', 'message', 'errorCode', 'statusCode']);
    assert.deepEqual([body['status'], body['code'], body['errorCode'], body['statusCode']], ['fail', code, '400', '400']);
    assert.match(body['message']!, reason);
  };
  await refused({ url: 'https://example.com/k', keyword: 'ab' }, 'error:keyword', /^code must be 6 to 12 characters long/);
  await refused({ url: 'https://example.com/k', keyword: 'STATIC' }, 'error:keyword', /^Short URL STATIC already exists in database or is reserved$/);
  await refused({ url: 'https://example.com/k', keyword: 'with space' }, 'error:keyword', /^code may only use/);
  await refused({ url: 'https://example.com/k', title: 't'.repeat(513) }, 'error:title', /^title must be at most 512 characters/);
  assert.equal(h.shortener.count, 0);
});

test('a title is tidied as YOURLS tidies it and shown by every action', async (t) => {
  const { h } = await setup(t);
  const created = await api(h, {
    ...SIGNED,
    action: 'shorturl',
    url: 'https://example.com/t',
    keyword: 'titled',
    title: '  A <b>bold</b>\n\t title  ',
    format: 'json',
  });
  assert.equal(created.status, 200, created.body);
  const title = 'A <b>bold</b> title';
  assert.equal((JSON.parse(created.body) as { title: string }).title, title);
  const expand = JSON.parse((await api(h, { ...SIGNED, action: 'expand', shorturl: 'titled', format: 'json' })).body) as { title: string };
  assert.equal(expand.title, title);
  const stats = JSON.parse((await api(h, { ...SIGNED, action: 'url-stats', shorturl: 'titled', format: 'json' })).body) as { link: { title: string } };
  assert.equal(stats.link.title, title);
  const xml = await api(h, { ...SIGNED, action: 'expand', shorturl: 'titled', format: 'xml' });
  assert.match(xml.body, /<title>A &lt;b&gt;bold&lt;\/b&gt; title<\/title>/);
  const stored = await h.shortener.service.get('titled');
  assert.ok(stored.ok);
  assert.equal(stored.record.title, title);
});

test('JSONP: a good callback wraps the answer, which names it too; a bad or missing one is 400; jsonp= is its other name', async (t) => {
  const { h } = await setup(t);
  const good = await api(h, { ...SIGNED, action: 'version', format: 'jsonp', callback: CALLBACK });
  assert.deepEqual([good.status, good.headers['content-type'], good.body], [200, TYPES.jsonp, `${CALLBACK}({"version":"1.10.4","callback":"${CALLBACK}"})`]);
  const alias = await api(h, { ...SIGNED, action: 'version', format: 'jsonp', jsonp: 'cb' });
  assert.deepEqual([alias.status, alias.body], [200, 'cb({"version":"1.10.4","callback":"cb"})']);
  for (const callback of ['alert(1);x', '1abc', 'a-b', '', 'a'.repeat(65), 'x\u2028y', '</script>']) {
    const bad = await api(h, { ...SIGNED, action: 'version', format: 'jsonp', callback });
    assert.deepEqual(
      [bad.status, bad.headers['content-type'], bad.body],
      [400, TYPES.jsonp, '{"errorCode":"400","error":"Invalid callback parameter"}'],
      callback,
    );
  }
  const none = await api(h, { ...SIGNED, action: 'version', format: 'jsonp' });
  assert.deepEqual([none.status, none.body], [400, '{"errorCode":"400","error":"Invalid callback parameter"}']);
  assert.equal((await api(h, { ...SIGNED, action: 'version', format: 'jsonp', callback: `$_.a${'b'.repeat(60)}` })).status, 200);
  // The callback of any request is part of the answer, as YOURLS adds it, whatever the format.
  const json = await api(h, { ...SIGNED, action: 'version', format: 'json', callback: 'cb' });
  assert.equal(json.body, phpJson({ version: '1.10.4', callback: 'cb' }));
  assert.deepEqual(readXml((await api(h, { ...SIGNED, action: 'version', callback: 'cb' })).body), [
    'root',
    [
      ['version', '1.10.4'],
      ['callback', 'cb'],
    ],
  ]);
});
