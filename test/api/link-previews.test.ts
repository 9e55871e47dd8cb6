/**
 * Link previews never use up a limited link (docs/api.md, link previews): a `GET /<code>` whose
 * `User-Agent` holds a preview fetcher's token, for a live link with a visit limit, is `200` with a
 * small page that names no target and is not counted; its "Continue" (`?go`) is always a visit.
 * `410` wins over the page; `HEAD` answers as that `GET` would; links without a limit redirect
 * previews as before; in-app browsers are people. The same in both tracking modes, on the fast
 * path and on the router's (a gated instance with public redirects, a trailing slash).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PREVIEW_FETCHERS } from '../../src/visits/preview-fetchers.ts';
import type { UrlRecord } from '../../src/links/record.ts';
import { codeOf, start, type Harness, type Reply } from '../support/helpers.ts';
import { onOneProcess } from '../support/cluster.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };
const TARGET = 'https://example.com/secret-target';
const PAGE_TITLE = /<title>A short link<\/title>/;
const TOKEN = 'gate-token';

/** A `User-Agent` holding `token` where its fetcher puts it. */
function agentOf(token: string, at: 'start' | 'anywhere'): string {
  return at === 'start' ? `${token}/2.23.20 A` : `Mozilla/5.0 (compatible; ${token} 1.0; +https://fetcher.example/bot)`;
}

/** In-app browsers: a person reading, never a preview. */
const IN_APP_BROWSERS: readonly string[] = [
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/458.0.0.36.107;FBBV/573443651;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/17.4;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP1A.240405.002; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.54 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/459.0.0.51.111;]',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 327.0.3.25.90 (iPhone15,2; iOS 17_4; en_US; en; scale=3.00; 1179x2556; 585719227)',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [LinkedInApp]/9.29.8110',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Twitter for iPhone/10.38',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Slack/4.38.125 Chrome/122.0.6261.156 Electron/29.3.0 Safari/537.36 Sonic Slack_SSB/4.38.125',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0',
];

async function create(h: Harness, fields: Record<string, unknown>): Promise<string> {
  const r = await h.req('/api/shorten', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ url: TARGET, ...fields }) });
  assert.equal(r.status, 201, r.body);
  return codeOf(r);
}

async function visits(h: Harness, code: string): Promise<number> {
  const r = await h.req(`/api/urls/${code}`);
  assert.equal(r.status, 200, r.body);
  return (JSON.parse(r.body) as UrlRecord).visit_count;
}

function assertPreview(r: Reply, label: string, head = false): void {
  assert.equal(r.status, 200, label);
  assert.equal(r.headers['content-type'], 'text/html; charset=utf-8', label);
  assert.equal(r.headers['cache-control'], 'private, no-store', label);
  assert.equal(r.headers.location, undefined, label);
  if (head) {
    assert.equal(r.body, '', label);
    return;
  }
  assert.match(r.body, PAGE_TITLE, label);
  assert.match(r.body, /<a href="\?go">Continue<\/a>/, label);
  // The page names no target: nothing of the URL, host included.
  assert.doesNotMatch(r.body, /example\.com|secret-target/, label);
}

for (const visitTracking of ['events', 'counts'] as const) {
  test(`every preview token (${visitTracking}): a page for a limited link, not counted; a redirect for an unlimited one`, async (t) => {
    const h = await start(t, { visitTracking });
    const limited = await create(h, { max_visits: 2 });
    const unlimited = await create(h, {});
    for (const { token, at } of PREVIEW_FETCHERS) {
      const ua = agentOf(token, at);
      assertPreview(await h.req(`/${limited}`, { headers: { 'user-agent': ua } }), `${token}: GET`);
      assertPreview(await h.req(`/${limited}`, { method: 'HEAD', headers: { 'user-agent': ua } }), `${token}: HEAD`, true);
      const redirected = await h.req(`/${unlimited}`, { headers: { 'user-agent': ua } });
      assert.equal(redirected.status, 302, `${token}: unlimited`);
      assert.equal(redirected.headers.location, TARGET);
    }
    assert.equal(await visits(h, limited), 0, 'no preview was counted');
    assert.equal(await visits(h, unlimited), PREVIEW_FETCHERS.length, 'previews of an unlimited link are visits as before');
  });
}

test('in-app browsers and browsers are people: a limited link redirects them and counts', async (t) => {
  const h = await start(t);
  const code = await create(h, { max_visits: 100 });
  for (const ua of IN_APP_BROWSERS) {
    const r = await h.req(`/${code}`, { headers: { 'user-agent': ua } });
    assert.equal(r.status, 302, ua);
    assert.equal(r.headers.location, TARGET, ua);
  }
  // No User-Agent at all: a visit too.
  assert.equal((await h.req(`/${code}`)).status, 302);
  assert.equal(await visits(h, code), IN_APP_BROWSERS.length + 1);
});

test('"Continue" (?go) is always a visit, also from a preview fetcher, and uses the limit', async (t) => {
  const h = await start(t);
  const code = await create(h, { max_visits: 1 });
  const slack = { 'user-agent': agentOf('Slackbot-LinkExpanding', 'anywhere') };
  assertPreview(await h.req(`/${code}`, { headers: slack }), 'preview');
  const go = await h.req(`/${code}?go`, { headers: slack });
  assert.equal(go.status, 302);
  assert.equal(go.headers.location, TARGET);
  assert.equal(await visits(h, code), 1);
  // Used up: 410 wins over the page, for GET and HEAD.
  const gone = await h.req(`/${code}`, { headers: slack });
  assert.equal(gone.status, 410);
  assert.match(gone.body, /<title>This link has reached its visit limit<\/title>/);
  assert.equal((await h.req(`/${code}`, { method: 'HEAD', headers: slack })).status, 410);
  assert.equal((await h.req(`/${code}?go`, { headers: slack })).status, 410);
  assert.equal(await visits(h, code), 1);
});

test('an expired limited link is 410 for a preview fetcher too; a missing one 404', async (t) => {
  const clock = { ms: Date.UTC(2024, 0, 1) };
  const h = await start(t, { now: () => clock.ms });
  const code = await create(h, { max_visits: 5, retention_days: 1 });
  const teams = { 'user-agent': agentOf('SkypeUriPreview', 'anywhere') };
  assertPreview(await h.req(`/${code}`, { headers: teams }), 'live');
  clock.ms += 86_400_000;
  const r = await h.req(`/${code}`, { headers: teams });
  assert.equal(r.status, 410);
  assert.match(r.body, /<title>This link has expired<\/title>/);
  assert.equal((await h.req(`/${code}`, { method: 'HEAD', headers: teams })).status, 410);
  assert.equal((await h.req('/nosuch1', { headers: teams })).status, 404);
});

test("the router's path gives the same answers: a trailing slash, and a gated instance with public redirects", async (t) => {
  const h = await start(t, { apiToken: TOKEN, publicRedirects: true });
  const auth = { authorization: `Bearer ${TOKEN}` };
  const r = await h.req('/api/shorten', { method: 'POST', headers: { ...JSON_HEADERS, ...auth }, body: JSON.stringify({ url: TARGET, max_visits: 3 }) });
  assert.equal(r.status, 201, r.body);
  const code = codeOf(r);
  const whatsapp = { 'user-agent': agentOf('WhatsApp', 'start') };
  assertPreview(await h.req(`/${code}`, { headers: whatsapp }), 'gated, public redirects');
  assertPreview(await h.req(`/${code}/`, { headers: whatsapp }), 'trailing slash');
  assertPreview(await h.req(`/${code}/`, { method: 'HEAD', headers: whatsapp }), 'trailing slash, HEAD', true);
  // From /<code>/ the page's ?go is /<code>/?go: a visit.
  const go = await h.req(`/${code}/?go`, { headers: whatsapp });
  assert.equal(go.status, 302);
  const meta = await h.req(`/api/urls/${code}`, { headers: auth });
  assert.equal((JSON.parse(meta.body) as UrlRecord).visit_count, 1);
});

test('previews are counted in shortener_redirects_total as result="preview"', onOneProcess('its metrics'), async (t) => {
  const h = await start(t);
  const code = await create(h, { max_visits: 3 });
  const discord = { 'user-agent': agentOf('Discordbot', 'anywhere') };
  await h.req(`/${code}`, { headers: discord });
  await h.req(`/${code}/`, { headers: discord });
  const metrics = (await h.req('/metrics')).body;
  assert.match(metrics, /^shortener_redirects_total\{result="preview"\} 2$/m);
});
