/**
 * The redirect hands the store the visit's event source (docs/analytics.md): with
 * `visit_tracking: events` a counted GET passes a source, which makes the event of that request
 * only when the store calls it, and counts it in `shortener_visit_events_total` by bot flag; with
 * `counts`, and for a HEAD or a preview, no source. Over a store that answers from memory (the fast
 * path's `countVisitIn`) and one that answers with promises (a database's `countVisit`). A store of
 * the test's own: it calls the source of every counted visit, as the stores with events do.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createService, type VisitRequest } from '../../src/links/service.ts';
import { createLogger } from '../../src/log.ts';
import { createMetrics } from '../../src/metrics/metrics.ts';
import type { Clock, LinkStore, VisitDecision } from '../../src/store/link-store.ts';
import type { VisitEvent, VisitEventSource } from '../../src/visits/event.ts';
import { createRecorder } from '../../src/visits/recorder.ts';
import { createVisitorIds } from '../../src/visits/visitor-id.ts';

const NOW_MS = Date.UTC(2024, 4, 1, 9);
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const CURL = 'curl/8.5.0';
const SLACK = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';

interface Call {
  code: string;
  count: boolean;
  event: VisitEvent | undefined;
}

/** Links `free1` (no limit) and `lim001` (a limit of 10); every call and its event, if any, recorded. */
function fakeStore(inMemory: boolean): { store: LinkStore; calls: Call[] } {
  const calls: Call[] = [];
  const links = new Map([
    ['free01', { url: 'https://example.com/free', limited: false }],
    ['lim001', { url: 'https://example.com/limited', limited: true }],
  ]);
  const decide = (code: string, count: boolean, source?: VisitEventSource): VisitDecision => {
    const link = links.get(code);
    // The source is called for a counted visit only, as the contract says.
    calls.push({ code, count, event: count && link !== undefined ? source?.() : undefined });
    return link === undefined ? { kind: 'missing' } : { kind: 'found', url: link.url, limited: link.limited };
  };
  const store = {
    countVisit: (code: string, _now: Clock, count: boolean, source?: VisitEventSource) =>
      inMemory ? decide(code, count, source) : Promise.resolve(decide(code, count, source)),
    ...(inMemory
      ? { countVisitIn: (text: string, start: number, _now: Clock, count: boolean, source?: VisitEventSource) => decide(text.slice(start), count, source) }
      : {}),
  } as unknown as LinkStore;
  return { store, calls };
}

function setup(inMemory: boolean, events: boolean) {
  const { store, calls } = fakeStore(inMemory);
  const metrics = createMetrics({ links: () => 0 });
  const recorder = events
    ? createRecorder({ trustProxy: 0, geoipHeader: '', now: () => NOW_MS, visitorIds: createVisitorIds({ now: () => NOW_MS }), recorded: metrics.visitEvent })
    : undefined;
  const service = createService({
    store,
    baseUrl: 'http://s.example',
    minShortLength: 6,
    maxShortLength: 12,
    maxUrlLength: 2048,
    apiKeys: [],
    now: () => NOW_MS,
    randomCode: () => 'unused',
    log: createLogger('silent'),
    recorder,
  });
  return { service, calls, metrics };
}

const req = (ua: string): VisitRequest => ({ headers: { 'user-agent': ua }, socket: { remoteAddress: '198.51.100.4' } });

async function eventCounts(metrics: ReturnType<typeof createMetrics>): Promise<{ humans: number; bots: number }> {
  const family = (await metrics.collect()).find((f) => f.name === 'shortener_visit_events_total')!;
  const value = (bot: string): number => (family.samples as { labels: [string, string][]; value: number }[]).find((s) => s.labels[0]![1] === bot)!.value;
  return { humans: value('false'), bots: value('true') };
}

for (const inMemory of [true, false]) {
  const store = inMemory ? 'a store in memory' : 'a store of promises';
  test(`events, ${store}: a counted GET records the event of its own request, on both doors`, async () => {
    const { service, calls, metrics } = setup(inMemory, true);
    assert.deepEqual(await service.visitIn('/free01', 1, true, req(CHROME)), { kind: 'found', url: 'https://example.com/free', limited: false });
    assert.deepEqual(await service.visit('free01', true, req(CURL)), { kind: 'found', url: 'https://example.com/free', limited: false });
    const events = calls.filter((c) => c.event !== undefined).map((c) => c.event!);
    assert.equal(events.length, 2);
    assert.deepEqual(
      { ...events[0]!, visitor: null },
      { time: NOW_MS / 1000, referrer: null, country: null, browser: 'Chrome', os: 'Windows', device: 'desktop', bot: false, visitor: null },
    );
    assert.equal(typeof events[0]!.visitor, 'number');
    assert.equal(events[1]!.bot, true);
    assert.deepEqual(await eventCounts(metrics), { humans: 1, bots: 1 });
  });

  test(`events, ${store}: HEAD, a miss and a preview of a limited link make no event`, async () => {
    const { service, calls, metrics } = setup(inMemory, true);
    await service.visitIn('/free01', 1, false, req(CHROME));
    await service.visit('nosuch', true, req(CHROME));
    assert.deepEqual(await service.visit('lim001', true, req(SLACK)), { kind: 'preview' });
    assert.deepEqual(await service.visitIn('/lim001', 1, true, req(SLACK)), { kind: 'preview' });
    assert.ok(calls.every((c) => c.event === undefined));
    assert.ok(calls.every((c) => !c.count || c.event === undefined));
    // A database is asked a miss's GET with counting (it counts nothing there); a link, never.
    assert.ok(!calls.some((c) => c.count && c.code !== 'nosuch'), 'no link was counted');
    assert.deepEqual(await eventCounts(metrics), { humans: 0, bots: 0 });
    // ?go from the same fetcher: counted, with its event (a bot's).
    await service.visit('lim001', true, req(SLACK), true);
    assert.equal(calls.at(-1)!.count, true);
    assert.equal(calls.at(-1)!.event!.bot, true);
  });

  test(`counts, ${store}: a counted GET passes no source`, async () => {
    const { service, calls, metrics } = setup(inMemory, false);
    await service.visitIn('/free01', 1, true, req(CHROME));
    await service.visit('lim001', true, req(CHROME));
    assert.deepEqual(
      calls.filter((c) => c.count),
      [
        { code: 'free01', count: true, event: undefined },
        { code: 'lim001', count: true, event: undefined },
      ],
    );
    assert.deepEqual(await eventCounts(metrics), { humans: 0, bots: 0 });
  });
}

test("a store of promises is asked once per ordinary GET; only a preview fetcher's GET asks first without counting", async () => {
  const { service, calls } = setup(false, true);
  await service.visit('lim001', true, req(CHROME));
  assert.deepEqual(
    calls.map((c) => c.count),
    [true],
  );
  calls.length = 0;
  await service.visit('free01', true, req(SLACK));
  assert.deepEqual(
    calls.map((c) => c.count),
    [false, true],
  );
});
