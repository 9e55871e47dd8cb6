/**
 * Where a link sends each visitor (docs/api.md): redirect rules, query forwarding, validity with a
 * fallback, and passwords, through the REST doors — set on a create, an edit and `PUT /rules`,
 * shown on the record, and obeyed by `GET`/`HEAD`/`POST /<code>`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { codeOf, start, type Harness, type Reply } from '../support/helpers.ts';
import { onOneProcess } from '../support/cluster.ts';

const KEY = 'routing-admin-key';
const JSON_HEADERS = { 'content-type': 'application/json', 'x-api-key': KEY };
const T = 1_790_000_000;
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

async function create(h: Harness, body: Record<string, unknown>): Promise<Reply> {
  return h.req('/api/shorten', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) });
}

async function record(h: Harness, code: string): Promise<Record<string, unknown>> {
  const got = await h.req(`/api/urls/${code}`, { headers: { 'x-api-key': KEY } });
  assert.equal(got.status, 200, got.body);
  return JSON.parse(got.body) as Record<string, unknown>;
}

async function patch(h: Harness, code: string, body: Record<string, unknown>): Promise<Reply> {
  return h.req(`/api/urls/${code}`, { method: 'PATCH', headers: JSON_HEADERS, body: JSON.stringify(body) });
}

const visits = async (h: Harness, code: string): Promise<number> => (await record(h, code))['visit_count'] as number;

test('a create takes every routing field; the record shows them all but the password; an edit sets, removes and keeps parts', async (t) => {
  const h = await start(t, { apiKeys: [KEY], logLevel: 'silent' });
  const rules = [{ url: 'https://example.com/ios', conditions: [{ type: 'device', key: null, value: 'iOS' }] }];
  const made = await create(h, {
    url: 'https://example.com/plain',
    rules,
    forward_query: true,
    valid_since: T,
    valid_until: T + 3600,
    fallback_url: 'https://example.com/later',
    password: 'correct horse',
  });
  assert.equal(made.status, 201, made.body);
  const code = codeOf(made);
  const shown = await record(h, code);
  assert.deepEqual(
    {
      rules: shown['rules'],
      forward_query: shown['forward_query'],
      valid_since: shown['valid_since'],
      valid_until: shown['valid_until'],
      fallback_url: shown['fallback_url'],
      password_protected: shown['password_protected'],
    },
    {
      rules: [{ url: 'https://example.com/ios', conditions: [{ type: 'device', key: null, value: 'ios' }] }],
      forward_query: true,
      valid_since: T,
      valid_until: T + 3600,
      fallback_url: 'https://example.com/later',
      password_protected: true,
    },
  );
  const text = JSON.stringify(shown);
  assert.ok(!text.includes('correct horse') && !text.includes('scrypt'), 'neither the password nor its hash is shown');
  // An edit: a part set, a part removed, the others kept.
  const edited = await patch(h, code, { forward_query: false, valid_since: null, password: null });
  assert.equal(edited.status, 200, edited.body);
  const after = JSON.parse(edited.body) as Record<string, unknown>;
  assert.equal(after['forward_query'], false);
  assert.equal(after['valid_since'], null);
  assert.equal(after['valid_until'], T + 3600);
  assert.equal(after['password_protected'], false);
  assert.deepEqual(after['rules'], shown['rules']);
  // The rules alone.
  assert.deepEqual(JSON.parse((await h.req(`/api/urls/${code}/rules`)).body), { rules: shown['rules'] });
  const put = await h.req(`/api/urls/${code}/rules`, { method: 'PUT', headers: JSON_HEADERS, body: '{"rules":[]}' });
  assert.equal(put.status, 200, put.body);
  assert.equal(put.body, '{"rules":[]}');
  assert.deepEqual((await record(h, code))['rules'], []);
});

test('routing fields the rules refuse are a 400 naming the field, and nothing is made or changed', async (t) => {
  const h = await start(t, { apiKeys: [KEY], logLevel: 'silent' });
  const refusals: [Record<string, unknown>, RegExp][] = [
    [{ rules: [{ url: 'https://example.com/x', conditions: [] }] }, /^rules\[0\]\.conditions: must be an array of 1 to 10 conditions, not 0$/],
    [
      { rules: [{ url: 'https://example.com/x', conditions: [{ type: 'planet', key: null, value: 'mars' }] }] },
      /^rules\[0\]\.conditions\[0\]\.type: must be one of/,
    ],
    [{ rules: [{ url: 'ftp://example.com/x', conditions: [{ type: 'device', key: null, value: 'ios' }] }] }, /^rules\[0\]\.url: /],
    [{ forward_query: 'yes' }, /^forward_query must be true or false$/],
    [{ valid_since: -1 }, /^valid_since must be an instant in Unix seconds/],
    [{ valid_since: T, valid_until: T }, /^valid_since must be before valid_until/],
    [{ fallback_url: 'javascript:alert(1)' }, /^fallback_url: /],
    [{ password: 'short' }, /^password must be 8 to 128 characters long$/],
  ];
  for (const [fields, detail] of refusals) {
    const refused = await create(h, { url: 'https://example.com/r', ...fields });
    assert.equal(refused.status, 400, JSON.stringify(fields));
    assert.match((JSON.parse(refused.body) as { detail: string }).detail, detail);
  }
  const list = await h.req('/api/urls', { headers: { 'x-api-key': KEY } });
  assert.equal(JSON.parse(list.body).count, 0, 'nothing was made');
  const code = codeOf(await create(h, { url: 'https://example.com/r' }));
  const before = await record(h, code);
  for (const [fields, detail] of refusals) {
    const refused = await patch(h, code, fields);
    assert.equal(refused.status, 400, JSON.stringify(fields));
    assert.match((JSON.parse(refused.body) as { detail: string }).detail, detail);
  }
  const put = await h.req(`/api/urls/${code}/rules`, { method: 'PUT', headers: JSON_HEADERS, body: '{"rules":[],"extra":1}' });
  assert.equal(put.status, 400);
  assert.equal((await h.req(`/api/urls/${code}/rules`, { method: 'PUT', headers: { 'x-api-key': KEY }, body: '{}' })).status, 415);
  assert.equal((await h.req(`/api/urls/${code}/rules`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"rules":[]}' })).status, 403);
  assert.equal((await h.req('/api/urls/nosuch/rules', { method: 'PUT', headers: JSON_HEADERS, body: '{"rules":[]}' })).status, 404);
  assert.deepEqual(await record(h, code), before, 'no refused edit changed anything');
});

test('the first rule whose conditions all hold gives the target; no rule, the original URL; each visit counted once', async (t) => {
  const h = await start(t, { apiKeys: [KEY], logLevel: 'silent' });
  const rules = [
    { url: 'https://apps.apple.com/app', conditions: [{ type: 'device', key: null, value: 'ios' }] },
    {
      url: 'https://example.com/fr',
      conditions: [
        { type: 'language', key: null, value: 'fr' },
        { type: 'query-param', key: 'ref', value: 'news' },
      ],
    },
    { url: 'https://example.com/any-ref', conditions: [{ type: 'any-value-query-param', key: 'ref', value: null }] },
  ];
  const code = codeOf(await create(h, { url: 'https://example.com/home', rules }));
  const to = async (path: string, headers: Record<string, string> = {}): Promise<string | undefined> => {
    const got = await h.req(path, { headers });
    assert.equal(got.status, 302, `${path} ${JSON.stringify(headers)}`);
    return got.headers.location;
  };
  assert.equal(await to(`/${code}`, { 'user-agent': IPHONE }), 'https://apps.apple.com/app');
  assert.equal(await to(`/${code}?ref=news`, { 'user-agent': WINDOWS, 'accept-language': 'de;q=1, fr-CA;q=0.5' }), 'https://example.com/fr');
  assert.equal(await to(`/${code}?ref=news`, { 'user-agent': WINDOWS, 'accept-language': 'de' }), 'https://example.com/any-ref');
  assert.equal(await to(`/${code}`, { 'user-agent': WINDOWS }), 'https://example.com/home');
  assert.equal(await to(`/${code}/`, { 'user-agent': IPHONE }), 'https://apps.apple.com/app', 'the general path answers the same');
  const head = await h.req(`/${code}`, { method: 'HEAD', headers: { 'user-agent': IPHONE } });
  assert.equal(head.status, 302);
  assert.equal(head.headers.location, 'https://apps.apple.com/app');
  assert.equal(await visits(h, code), 5, 'every GET counted once, the HEAD not');
});

test('forward_query appends the short URL query after the target query and before its fragment', async (t) => {
  const h = await start(t, { apiKeys: [KEY], logLevel: 'silent' });
  const cases: [target: string, path: string, location: string][] = [
    ['https://example.com/a', '?utm_source=x', 'https://example.com/a?utm_source=x'],
    ['https://example.com/a?b=1', '?utm_source=x&c=%20', 'https://example.com/a?b=1&utm_source=x&c=%20'],
    ['https://example.com/a?b=1#top', '?utm=x', 'https://example.com/a?b=1&utm=x#top'],
    ['https://example.com/a#frag', '?u=1', 'https://example.com/a?u=1#frag'],
    ['https://example.com/a?b=1', '', 'https://example.com/a?b=1'],
  ];
  for (const [target, query, location] of cases) {
    const code = codeOf(await create(h, { url: target, forward_query: true }));
    const got = await h.req(`/${code}${query}`);
    assert.equal(got.status, 302);
    assert.equal(got.headers.location, location, `${target} + ${query}`);
  }
  // A preview page's Continue (`?go`) is not the visitor's query.
  const limited = codeOf(await create(h, { url: 'https://example.com/l', forward_query: true, max_visits: 5 }));
  assert.equal((await h.req(`/${limited}?utm=x&go`)).headers.location, 'https://example.com/l?utm=x');
  const plain = codeOf(await create(h, { url: 'https://example.com/p?b=1' }));
  assert.equal((await h.req(`/${plain}?utm=x`)).headers.location, 'https://example.com/p?b=1', 'without forward_query the query stays behind');
});

test(
  'validity: before valid_since an unknown code, from valid_until expired or the fallback; a used-up link goes to its fallback too; none is a visit',
  onOneProcess('it moves its own clock'),
  async (t) => {
    const clock = { ms: T * 1000 };
    const h = await start(t, { apiKeys: [KEY], logLevel: 'silent', now: () => clock.ms });
    const later = codeOf(await create(h, { url: 'https://example.com/v', valid_since: T + 10, valid_until: T + 20 }));
    const fallback = codeOf(await create(h, { url: 'https://example.com/w', valid_until: T + 20, fallback_url: 'https://example.com/fb' }));
    const limited = codeOf(await create(h, { url: 'https://example.com/l', max_visits: 1, fallback_url: 'https://example.com/used' }));
    assert.equal((await h.req(`/${later}`)).status, 404, 'not valid yet: unknown');
    clock.ms = (T + 10) * 1000;
    assert.equal((await h.req(`/${later}`)).status, 302, 'valid from valid_since on');
    clock.ms = (T + 20) * 1000;
    const expired = await h.req(`/${later}`);
    assert.equal(expired.status, 410);
    assert.match(expired.body, /This link has expired/);
    const sent = await h.req(`/${fallback}`);
    assert.equal(sent.status, 302);
    assert.equal(sent.headers.location, 'https://example.com/fb');
    assert.equal((await h.req(`/${limited}`)).headers.location, 'https://example.com/l');
    const used = await h.req(`/${limited}`);
    assert.equal(used.status, 302);
    assert.equal(used.headers.location, 'https://example.com/used');
    assert.deepEqual([await visits(h, later), await visits(h, fallback), await visits(h, limited)], [1, 0, 1]);
  },
);

test('a password-protected link: the form (no target in it), a wrong password 401, the right one the redirect and one visit; X-Link-Password too', async (t) => {
  const h = await start(t, { apiKeys: [KEY], logLevel: 'silent' });
  const code = codeOf(await create(h, { url: 'https://secret.example/target', password: 'open sesame', max_visits: 5 }));
  const form = await h.req(`/${code}`);
  assert.equal(form.status, 200);
  assert.equal(form.headers['content-type'], 'text/html; charset=utf-8');
  assert.match(form.body, /<form method="post">/);
  assert.ok(!form.body.includes('secret.example'), 'the target is not in the page');
  const post = (password: string): Promise<Reply> =>
    h.req(`/${code}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `password=${encodeURIComponent(password)}` });
  const wrong = await post('open sesamE');
  assert.equal(wrong.status, 401);
  assert.match(wrong.body, /Wrong password/);
  const right = await post('open sesame');
  assert.equal(right.status, 302);
  assert.equal(right.headers.location, 'https://secret.example/target');
  const header = await h.req(`/${code}`, { headers: { 'x-link-password': 'open sesame' } });
  assert.equal(header.status, 302);
  assert.equal((await h.req(`/${code}`, { headers: { 'x-link-password': 'nope nope' } })).status, 401);
  const head = await h.req(`/${code}`, { method: 'HEAD' });
  assert.equal(head.status, 200, 'HEAD without the password: the form');
  assert.equal(await visits(h, code), 2, 'only the passed visits count, against the limit too');
  const json = await h.req(`/${code}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"password":"open sesame"}' });
  assert.equal(json.status, 415);
});

test(
  'five wrong passwords a minute for one link from one address, then 429 with Retry-After; the right one is refused too until the minute ends',
  onOneProcess('its attempts are counted per process'),
  async (t) => {
    const clock = { ms: T * 1000 };
    const h = await start(t, { apiKeys: [KEY], logLevel: 'silent', now: () => clock.ms });
    const code = codeOf(await create(h, { url: 'https://example.com/locked', password: 'the password' }));
    const other = codeOf(await create(h, { url: 'https://example.com/other', password: 'the password' }));
    for (let i = 0; i < 5; i++) assert.equal((await h.req(`/${code}`, { headers: { 'x-link-password': `wrong ${i}!!` } })).status, 401);
    const limited = await h.req(`/${code}`, { headers: { 'x-link-password': 'the password' } });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers['retry-after'], '60');
    assert.match(limited.body, /Too many wrong passwords/);
    assert.equal((await h.req(`/${other}`, { headers: { 'x-link-password': 'the password' } })).status, 302, 'another link is not limited');
    clock.ms += 30_000;
    assert.equal((await h.req(`/${code}`, { headers: { 'x-link-password': 'the password' } })).headers['retry-after'], '30');
    clock.ms += 30_000;
    assert.equal((await h.req(`/${code}`, { headers: { 'x-link-password': 'the password' } })).status, 302);
  },
);

test("a visit's event keeps the rule that sent it: its index, or null; the events list and the visits export show it", async (t) => {
  const h = await start(t, { apiKeys: [KEY], logLevel: 'silent', visitFlushMs: 5 });
  const rules = [
    { url: 'https://apps.apple.com/app', conditions: [{ type: 'device', key: null, value: 'ios' }] },
    { url: 'https://example.com/campaign', conditions: [{ type: 'any-value-query-param', key: 'utm', value: null }] },
  ];
  const code = codeOf(await create(h, { url: 'https://example.com/home', rules }));
  for (const [path, ua] of [
    [`/${code}`, IPHONE],
    [`/${code}?utm=x`, WINDOWS],
    [`/${code}`, WINDOWS],
    [`/${code}?utm=y`, IPHONE],
  ] as const) {
    assert.equal((await h.req(path, { headers: { 'user-agent': ua } })).status, 302);
  }
  const listed = await h.req(`/api/urls/${code}/visits`, { headers: { 'x-api-key': KEY } });
  assert.equal(listed.status, 200, listed.body);
  const events = (JSON.parse(listed.body) as { visits: { rule: number | null; os: string }[] }).visits;
  assert.deepEqual(events.map((e) => `${e.os}:${e.rule}`).sort(), ['Windows:1', 'Windows:null', 'iOS:0', 'iOS:0']);
  const exported = await h.req('/api/visits/export?format=csv', { headers: { 'x-api-key': KEY } });
  assert.equal(exported.status, 200, exported.body);
  const lines = exported.body.trim().split('\r\n');
  assert.equal(lines[0], 'short_code,time,referrer,country,browser,os,device,bot,domain,rule');
  assert.deepEqual(
    lines
      .slice(1)
      .map((line) => line.split(',').at(-1))
      .sort(),
    ['', '0', '0', '1'],
  );
});

test('a password is in no answer, log line, metric or export; previews get the form; a rule URL is checked as a link', async (t) => {
  const secret = 'Marker-Pass-9137';
  const h = await start(t, { apiKeys: [KEY], logLevel: 'debug' });
  const code = codeOf(await create(h, { url: 'https://example.com/guarded', password: secret, max_visits: 3 }));
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const answers = [
    await h.req(`/${code}`, { headers: { 'x-link-password': secret } }),
    await h.req(`/${code}`, { method: 'POST', headers: form, body: `password=${secret}` }),
    await h.req(`/${code}`, { method: 'POST', headers: form, body: `password=${secret}x` }),
    await patch(h, code, { password: `${secret}-2` }),
    await h.req(`/api/urls/${code}`),
    await h.req('/api/urls', { headers: { 'x-api-key': KEY } }),
    await h.req('/api/export', { headers: { 'x-api-key': KEY } }),
    await h.req('/api/export?format=csv', { headers: { 'x-api-key': KEY } }),
    await h.req('/metrics'),
  ];
  assert.deepEqual(
    answers.map((r) => r.status),
    [302, 302, 401, 200, 200, 200, 200, 200, 200],
  );
  for (const r of answers) assert.ok(!r.body.includes(secret) && !JSON.stringify(r.headers).includes(secret), r.body.slice(0, 100));
  assert.ok(
    h.logs.lines.some((l) => l['msg'] === 'request'),
    'requests were logged',
  );
  assert.ok(!h.logs.raw.includes(secret), 'no log line holds the password');
  // A link-preview fetcher gets the form, as anyone without the password.
  const preview = await h.req(`/${code}`, { headers: { 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' } });
  assert.equal(preview.status, 200);
  assert.match(preview.body, /<form method="post">/);
  // A rule's target obeys the URL rules: no userinfo, never a short link of this service.
  const device = [{ type: 'device', key: null, value: 'ios' }];
  for (const target of ['https://user:pw@example.com/', `http://127.0.0.1:${h.port}/${code}`]) {
    const refused = await create(h, { url: 'https://example.com/r', rules: [{ url: target, conditions: device }] });
    assert.equal(refused.status, 400, target);
    assert.match((JSON.parse(refused.body) as { detail: string }).detail, /^rules\[0\]\.url: /);
  }
});

test(
  "past valid_until, a link without a fallback_url goes to its domain's expired redirect; one with a fallback_url to its own",
  onOneProcess("it moves its own clock, and a domain's redirects reach the other instances within a second"),
  async (t) => {
    const clock = { ms: T * 1000 };
    const h = await start(t, { apiKeys: [KEY], logLevel: 'silent', now: () => clock.ms, domains: ['go.example'] });
    const set = await h.req(`/api/domains/127.0.0.1:${h.port}`, { method: 'PATCH', headers: JSON_HEADERS, body: '{"expired":"https://home.example/gone"}' });
    assert.equal(set.status, 200, set.body);
    const plain = codeOf(await create(h, { url: 'https://example.com/a', valid_until: T + 5 }));
    const own = codeOf(await create(h, { url: 'https://example.com/b', valid_until: T + 5, fallback_url: 'https://example.com/own' }));
    clock.ms = (T + 5) * 1000;
    assert.equal((await h.req(`/${plain}`)).headers.location, 'https://home.example/gone');
    assert.equal((await h.req(`/${own}`)).headers.location, 'https://example.com/own');
    assert.deepEqual([await visits(h, plain), await visits(h, own)], [0, 0]);
  },
);

test("country and address rules read the request as its event does: behind trust_proxy, the proxy's country header and the forwarded address", async (t) => {
  const h = await start(t, { apiKeys: [KEY], logLevel: 'silent', trustProxy: 1, geoipHeader: 'CF-IPCountry' });
  const rules = [
    { url: 'https://example.com/fr', conditions: [{ type: 'country', key: null, value: 'fr' }] },
    { url: 'https://example.com/office', conditions: [{ type: 'ip-address', key: null, value: '203.0.113.0/24' }] },
  ];
  const code = codeOf(await create(h, { url: 'https://example.com/home', rules }));
  const to = async (headers: Record<string, string>) => (await h.req(`/${code}`, { headers })).headers.location;
  assert.equal(await to({ 'cf-ipcountry': 'FR', 'x-forwarded-for': '198.51.100.7' }), 'https://example.com/fr');
  assert.equal(await to({ 'cf-ipcountry': 'DE', 'x-forwarded-for': '203.0.113.9' }), 'https://example.com/office');
  assert.equal(await to({ 'cf-ipcountry': 'DE', 'x-forwarded-for': '203.0.113.9, 198.51.100.7' }), 'https://example.com/home', 'the entry the proxy added');
  assert.equal(await to({}), 'https://example.com/home', 'the socket (127.0.0.1) is in no rule');
});
