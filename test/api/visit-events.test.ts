/**
 * An event is recorded (docs/analytics.md), end to end on the log store: a real server with
 * `visit_tracking: events`, one proxy in front and a country database; the redirects' events are
 * then read back from the data dir. A counted GET records the request's referrer host, country,
 * families, bot flag and an id; `DNT: 1` keeps the time and the bot flag; `HEAD`, a miss and a
 * preview of a limited link record nothing; with `counts` no event at all; every event is counted
 * in `shortener_visit_events_total`.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { ShortenerOptions } from '../../src/app.ts';
import { createLogger } from '../../src/log.ts';
import { LogLinkStore } from '../../src/store/log/log-link-store.ts';
import { LogEngine } from '../../src/store/log/log-engine.ts';
import type { VisitEvent } from '../../src/visits/event.ts';
import { codeOf, start, tempDir, type Harness } from '../support/helpers.ts';
import { writeMmdb } from '../support/mmdb-writer.ts';
import { onOneProcess } from '../support/cluster.ts';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const SLACK = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';
const NOW_MS = Date.UTC(2024, 4, 1, 9, 30);

async function serve(t: TestContext, options: ShortenerOptions): Promise<Harness> {
  const db = join(tempDir(t), 'country.mmdb');
  writeFileSync(db, writeMmdb({ ipVersion: 6, recordSize: 24, networks: [['198.51.100.0/24', { country_code: 'NL' }]] }));
  return start(t, { now: () => NOW_MS, trustProxy: 1, geoipDb: db, ...options });
}

async function create(h: Harness, fields: Record<string, unknown>): Promise<string> {
  const r = await h.req('/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://example.com/', ...fields }),
  });
  assert.equal(r.status, 201, r.body);
  return codeOf(r);
}

/**
 * The events of each code, newest first (no route shows the visitor id, so neither does this), and
 * its unique visitors, read from the data dir once the server is closed.
 */
async function eventsOf(h: Harness, codes: readonly string[]): Promise<Map<string, { events: VisitEvent[]; unique: number }>> {
  await h.close(true);
  const links = new LogLinkStore(new LogEngine({ dir: h.dir, fsync: 'off', log: createLogger('silent') }));
  try {
    const all = { from: 0, to: 2 ** 32, bots: 'include' } as const;
    const now = NOW_MS / 1000;
    const found = new Map<string, { events: VisitEvent[]; unique: number }>();
    for (const code of codes) {
      const stats = await links.visitStats(code, { ...all, edges: [all.from, all.to] }, now);
      found.set(code, { events: links.listVisits(code, all, 1000, 0, now)?.events ?? [], unique: stats?.uniqueVisitors ?? -1 });
    }
    return found;
  } finally {
    await links.close();
  }
}

test('a counted GET records its event; DNT keeps time and bot; HEAD, misses and previews record nothing', onOneProcess('its metrics'), async (t) => {
  const h = await serve(t, {});
  const free = await create(h, {});
  const limited = await create(h, { max_visits: 5 });
  const viaProxy = { 'x-forwarded-for': '203.0.113.1, 198.51.100.23' };
  assert.equal((await h.req(`/${free}`, { headers: { ...viaProxy, 'user-agent': CHROME, referer: 'https://Mail.Example.org/inbox?id=42' } })).status, 302);
  assert.equal((await h.req(`/${free}`, { headers: { ...viaProxy, 'user-agent': SLACK, dnt: '1' } })).status, 302);
  // The same client again: the same daily id.
  assert.equal((await h.req(`/${free}`, { headers: { ...viaProxy, 'user-agent': CHROME } })).status, 302);
  assert.equal((await h.req(`/${free}`, { method: 'HEAD', headers: { 'user-agent': CHROME } })).status, 302);
  assert.equal((await h.req(`/${limited}`, { headers: { 'user-agent': SLACK } })).status, 200);
  assert.equal((await h.req('/nosuch1', { headers: { 'user-agent': CHROME } })).status, 404);
  // The general path too (a trailing slash), on a limited link: counted with its event.
  assert.equal((await h.req(`/${limited}/`, { headers: { ...viaProxy, 'user-agent': CHROME } })).status, 302);
  const metrics = (await h.req('/metrics')).body;
  assert.match(metrics, /^shortener_visit_events_total\{bot="false"\} 3$/m);
  assert.match(metrics, /^shortener_visit_events_total\{bot="true"\} 1$/m);
  const events = await eventsOf(h, [free, limited]);
  const time = Math.floor(NOW_MS / 1000);
  const [again, dnt, chrome] = events.get(free)!.events;
  assert.equal(events.get(free)!.events.length, 3);
  assert.deepEqual(chrome, {
    time,
    referrer: 'mail.example.org',
    country: 'NL',
    browser: 'Chrome',
    os: 'Windows',
    device: 'desktop',
    bot: false,
    visitor: null,
  });
  assert.deepEqual(again, { ...chrome, referrer: null });
  assert.deepEqual(dnt, { time, referrer: null, country: null, browser: null, os: null, device: null, bot: true, visitor: null });
  // Chrome twice under one daily id, and the DNT event (no id) counts one: two visitors.
  assert.equal(events.get(free)!.unique, 2);
  assert.equal(events.get(limited)!.events.length, 1);
  assert.equal(events.get(limited)!.events[0]!.country, 'NL');
  assert.equal(events.get(limited)!.unique, 1);
});

test('visit_tracking counts: visits are counted, no event is recorded', onOneProcess('its metrics'), async (t) => {
  const h = await serve(t, { visitTracking: 'counts' });
  const code = await create(h, {});
  assert.equal((await h.req(`/${code}`, { headers: { 'user-agent': CHROME } })).status, 302);
  assert.equal((await h.req(`/${code}/`, { headers: { 'user-agent': CHROME } })).status, 302);
  assert.match((await h.req('/metrics')).body, /^shortener_visit_events_total\{bot="false"\} 0$/m);
  const meta = JSON.parse((await h.req(`/api/urls/${code}`)).body) as { visit_count: number };
  assert.equal(meta.visit_count, 2);
  assert.deepEqual((await eventsOf(h, [code])).get(code)!.events, []);
});
