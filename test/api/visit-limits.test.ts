/**
 * Visit limits (docs/api.md, managing links): `max_visits` on a create, the first N counted visits
 * redirect and the rest are 410 with their own page (not counted), HEAD answers as the next GET
 * would without counting, the record stays visible, exact counts under 500 concurrent GETs, and
 * a counted visit that cannot be written (a full disk) is a 503 that grants nothing and is given
 * back.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { UrlList, UrlRecord } from '../../src/links/record.ts';
import { codeOf, request, start, type Harness, type Reply } from '../support/helpers.ts';
import { fillableDisk } from '../support/disk-full.ts';
import { onOneProcess } from '../support/cluster.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };
const KEY = 'k1';
const LIMIT_PAGE = /<title>This link has reached its visit limit<\/title>/;

async function limited(h: Harness, maxVisits: unknown, url = 'https://example.com/limited'): Promise<string> {
  const r = await h.req('/api/shorten', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ url, max_visits: maxVisits }) });
  assert.equal(r.status, 201, r.body);
  return codeOf(r);
}

async function meta(h: Harness, code: string): Promise<UrlRecord> {
  const r = await h.req(`/api/urls/${code}`);
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as UrlRecord;
}

function assertUsedUp(r: Reply, label: string, head = false): void {
  assert.equal(r.status, 410, label);
  assert.equal(r.headers['content-type'], 'text/html; charset=utf-8', label);
  assert.equal(r.headers['cache-control'], 'private, no-store', label);
  assert.equal(r.headers.location, undefined, label);
  if (head) assert.equal(r.body, '', label);
  else assert.match(r.body, LIMIT_PAGE, label);
}

test('max_visits 3: three redirects, then 410 with the limit page; a 410 is not counted', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const code = await limited(h, 3);
  assert.equal((await meta(h, code)).max_visits, 3);
  // HEAD first: it answers as the next GET would, and counts nothing.
  assert.equal((await h.req(`/${code}`, { method: 'HEAD' })).status, 302);
  for (let i = 0; i < 3; i++) {
    // Both spellings: the fast path and the router's.
    const r = await h.req(i === 1 ? `/${code}/` : `/${code}`);
    assert.equal(r.status, 302, `visit ${i + 1}`);
    assert.equal(r.headers.location, 'https://example.com/limited');
  }
  assertUsedUp(await h.req(`/${code}`), 'fourth GET');
  assertUsedUp(await h.req(`/${code}/?again=1`), 'fifth GET, general path');
  assertUsedUp(await h.req(`/${code}`, { method: 'HEAD' }), 'HEAD once used up', true);
  const record = await meta(h, code);
  assert.equal(record.visit_count, 3, 'the 410s were not counted');
  assert.equal(record.max_visits, 3);
  // Still visible: metadata (above), list and lookup.
  const list = JSON.parse((await h.req('/api/urls', { headers: { 'x-api-key': KEY } })).body) as UrlList;
  assert.deepEqual(list.urls, [record]);
  assert.deepEqual(JSON.parse((await h.req(`/api/lookup?url=${encodeURIComponent('https://example.com/limited')}`)).body), record);
});

test('a one-time link (max_visits 1) opens once; HEAD before it counts nothing', async (t) => {
  const h = await start(t);
  const code = await limited(h, 1);
  for (let i = 0; i < 3; i++) assert.equal((await h.req(`/${code}`, { method: 'HEAD' })).status, 302);
  assert.equal((await h.req(`/${code}`)).status, 302);
  assertUsedUp(await h.req(`/${code}`), 'second GET');
  assert.equal((await meta(h, code)).visit_count, 1);
});

test('max_visits from the query or a form as digits; absent, null or empty is unlimited', async (t) => {
  const h = await start(t);
  const fromQuery = await h.req(`/api/shorten?url=${encodeURIComponent('https://example.com/q')}&max_visits=7`, { method: 'POST' });
  assert.equal((await meta(h, codeOf(fromQuery))).max_visits, 7);
  const form = new URLSearchParams({ url: 'https://example.com/f', max_visits: '2147483647' }).toString();
  const fromForm = await h.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form });
  assert.equal((await meta(h, codeOf(fromForm))).max_visits, 2147483647);
  // The query wins over the body.
  const both = await h.req('/api/shorten?max_visits=4', { method: 'POST', headers: JSON_HEADERS, body: '{"url":"https://example.com/b","max_visits":9}' });
  assert.equal((await meta(h, codeOf(both))).max_visits, 4);
  for (const body of ['{"url":"https://example.com/u"}', '{"url":"https://example.com/u","max_visits":null}']) {
    const r = await h.req('/api/shorten', { method: 'POST', headers: JSON_HEADERS, body });
    assert.equal((await meta(h, codeOf(r))).max_visits, null, body);
  }
  const empty = await h.req(`/api/shorten?url=${encodeURIComponent('https://example.com/e')}&max_visits=`, { method: 'POST' });
  assert.equal((await meta(h, codeOf(empty))).max_visits, null);
});

test('bad max_visits values are 400 with the range', async (t) => {
  const h = await start(t);
  const bodies: unknown[] = [0, -1, 2147483648, 1.5, '5', true, [], {}];
  for (const value of bodies) {
    const r = await h.req('/api/shorten', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ url: 'https://example.com/', max_visits: value }) });
    assert.equal(r.status, 400, JSON.stringify(value));
    assert.equal(r.body, '{"detail":"max_visits must be an integer from 1 to 2147483647, or null for no limit"}', JSON.stringify(value));
  }
  for (const value of ['0', 'abc', '1e3', '-2', '99999999999']) {
    const r = await h.req(`/api/shorten?url=${encodeURIComponent('https://example.com/')}&max_visits=${value}`, { method: 'POST' });
    assert.equal(r.status, 400, value);
  }
  assert.equal(h.shortener.count, 0);
});

test(
  '500 concurrent GETs of a link with max_visits 50: exactly 50 redirects and 450 410s, visit_count 50',
  onOneProcess('it reads its metrics (the race across instances: test/scale/contract.test.ts)'),
  async (t) => {
    const h = await start(t, { logLevel: 'silent' });
    const code = await limited(h, 50);
    const replies = await Promise.all(Array.from({ length: 500 }, (_, i) => request(h.port, i % 5 === 0 ? `/${code}/` : `/${code}`)));
    const statuses = new Map<number, number>();
    for (const r of replies) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    assert.deepEqual([...statuses.entries()].sort(), [
      [302, 50],
      [410, 450],
    ]);
    for (const r of replies) if (r.status === 410) assert.match(r.body, LIMIT_PAGE);
    assert.equal((await meta(h, code)).visit_count, 50);
    const metrics = (await h.req('/metrics')).body;
    assert.match(metrics, /^shortener_redirects_total\{result="limit_reached"\} 450$/m);
  },
);

test(
  'a counted visit of a limited link that cannot be written is 503 with a detail, grants nothing, and is given back',
  onOneProcess('it fills its disk'),
  async (t) => {
    const { fs, disk } = fillableDisk();
    const h = await start(t, { fs, logLevel: 'silent' });
    const code = await limited(h, 5);
    const unlimited = await limited(h, null, 'https://example.com/free');
    disk.full = true;
    for (const path of [`/${code}`, `/${code}/`]) {
      const r = await h.req(path);
      assert.equal(r.status, 503, path);
      assert.equal(r.headers['content-type'], 'application/json', path);
      assert.equal(r.headers.location, undefined, path);
      const detail = (JSON.parse(r.body) as { detail: string }).detail;
      assert.match(detail, /ENOSPC/, path);
    }
    // HEAD writes nothing, and a link without a limit counts in memory: both still answer.
    assert.equal((await h.req(`/${code}`, { method: 'HEAD' })).status, 302);
    assert.equal((await h.req(`/${unlimited}`)).status, 302);
    disk.full = false;
    // The failed visits were not granted, and their writes never reached the disk: both were given
    // back, so all five visits remain.
    assert.equal((await meta(h, code)).visit_count, 0);
    const replies = [];
    for (let i = 0; i < 6; i++) replies.push((await h.req(`/${code}`)).status);
    assert.deepEqual(replies, [302, 302, 302, 302, 302, 410]);
    assert.equal((await meta(h, code)).visit_count, 5);
  },
);
