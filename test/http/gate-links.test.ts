/**
 * Short links under the gate (docs/security.md, the bearer-token gate): a gated instance is a
 * private one, so `/<code>` needs the token like the API — unless `public_redirects` opens
 * `GET`/`HEAD /<code>` to everyone. One table, run with and without `public_redirects`, at the root
 * and under a base path, covering the redirect's fast path (`GET /<code>` spelled plainly) and
 * every other spelling, which takes the general path. The visit counts show which redirects really
 * ran.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Refusal } from '../../src/http/gate.ts';
import { assert401, RIGHT, TOKEN } from '../support/gate-helpers.ts';
import { codeOf, start, type Harness, visitsOf } from '../support/helpers.ts';

type Auth = 'none' | 'right' | 'wrong';
/** A status, or a 401 with the refusal it must carry. */
type Outcome = 302 | 404 | 405 | 410 | 415 | Refusal;

interface Row {
  method: string;
  /** `{p}` is the base path, `{code}` a live code, `{old}` an expired one. */
  target: string;
  auth: Auth;
  /** With `public_redirects` off (the default), and on. */
  gated: Outcome;
  open: Outcome;
}

const ROWS: readonly Row[] = [
  // The fast path's own spelling.
  { method: 'GET', target: '{p}/{code}', auth: 'none', gated: 'missing', open: 302 },
  { method: 'GET', target: '{p}/{code}', auth: 'wrong', gated: 'invalid', open: 302 },
  { method: 'GET', target: '{p}/{code}', auth: 'right', gated: 302, open: 302 },
  { method: 'HEAD', target: '{p}/{code}', auth: 'none', gated: 'missing', open: 302 },
  { method: 'HEAD', target: '{p}/{code}', auth: 'right', gated: 302, open: 302 },
  // Other spellings of the same link: the general path, same answers.
  { method: 'GET', target: '{p}/{code}/', auth: 'none', gated: 'missing', open: 302 },
  { method: 'GET', target: '{p}/{code}?utm=1', auth: 'none', gated: 'missing', open: 302 },
  { method: 'GET', target: '{p}/{code}/?utm=1', auth: 'right', gated: 302, open: 302 },
  { method: 'GET', target: '{p}/%{hex}{rest}', auth: 'none', gated: 'missing', open: 302 },
  { method: 'GET', target: 'http://evil.example{p}/{code}', auth: 'none', gated: 'missing', open: 302 },
  { method: 'HEAD', target: '{p}/{code}/', auth: 'none', gated: 'missing', open: 302 },
  // Two Authorization headers: refused where the token counts, ignored where the link is public.
  { method: 'GET', target: '{p}/{code}', auth: 'none', gated: 'repeated', open: 302 },
  // A password form's POST is public with the links: without a form, it is 415.
  { method: 'POST', target: '{p}/{code}', auth: 'none', gated: 'missing', open: 415 },
  { method: 'POST', target: '{p}/{code}', auth: 'right', gated: 415, open: 415 },
  // Other methods on a link stay gated either way.
  { method: 'DELETE', target: '{p}/{code}', auth: 'none', gated: 'missing', open: 'missing' },
  { method: 'PUT', target: '{p}/{code}', auth: 'wrong', gated: 'invalid', open: 'invalid' },
  // Unknown and expired codes: gated answers without the token, the link pages once public.
  { method: 'GET', target: '{p}/zzzzzz', auth: 'none', gated: 'missing', open: 404 },
  { method: 'GET', target: '{p}/zzzzzz', auth: 'right', gated: 404, open: 404 },
  { method: 'HEAD', target: '{p}/zzzzzz', auth: 'none', gated: 'missing', open: 404 },
  { method: 'GET', target: '{p}/{old}', auth: 'none', gated: 'missing', open: 410 },
  { method: 'GET', target: '{p}/{old}', auth: 'right', gated: 410, open: 410 },
  // Not links at all: a reserved word, two segments — protected either way.
  { method: 'GET', target: '{p}/favicon.ico', auth: 'none', gated: 'missing', open: 'missing' },
  { method: 'GET', target: '{p}/{code}/more', auth: 'none', gated: 'missing', open: 'missing' },
  // The API beside them stays gated either way.
  { method: 'GET', target: '{p}/api/urls/{code}', auth: 'none', gated: 'missing', open: 'missing' },
];

const DAY_MS = 86_400_000;

async function create(h: Harness, p: string, body: string): Promise<string> {
  const r = await h.req(`${p}/api/shorten`, { method: 'POST', headers: { authorization: RIGHT, 'content-type': 'application/json' }, body });
  assert.equal(r.status, 201, r.body);
  return codeOf(r);
}

function headersFor(row: Row, refusal: Outcome): Record<string, string | string[]> {
  if (refusal === 'repeated') return { authorization: [RIGHT, RIGHT] };
  if (row.auth === 'right') return { authorization: RIGHT };
  if (row.auth === 'wrong') return { authorization: `${RIGHT}x` };
  return {};
}

for (const publicRedirects of [false, true]) {
  for (const p of ['', '/s']) {
    test(`short links with the gate on, public_redirects ${publicRedirects}, base path "${p}"`, async (t) => {
      let now = Date.UTC(2030, 0, 1);
      const h = await start(t, { apiToken: TOKEN, publicRedirects, now: () => now, ...(p ? { baseUrl: `http://localhost${p}` } : {}) });
      const code = await create(h, p, '{"url":"https://example.com/linked"}');
      const old = await create(h, p, '{"url":"https://example.com/old","retention_days":1}');
      now += 2 * DAY_MS;
      let visits = 0;
      for (const row of ROWS) {
        const expected = publicRedirects ? row.open : row.gated;
        const target = row.target
          .replace('{p}', p)
          .replace('{code}', code)
          .replace('{old}', old)
          .replace('{hex}', code.charCodeAt(0).toString(16))
          .replace('{rest}', code.slice(1));
        const label = `${row.method} ${target} (${row.auth}${row.gated === 'repeated' ? ', twice' : ''})`;
        const r = await h.req(target, { method: row.method, headers: headersFor(row, row.gated) });
        const head = row.method === 'HEAD';
        if (typeof expected === 'string') {
          assert401(r, expected, label, head);
          continue;
        }
        assert.equal(r.status, expected, `${label}: ${r.body}`);
        assert.equal(r.headers['www-authenticate'], undefined, label);
        if (expected === 302) {
          assert.equal(r.headers.location, 'https://example.com/linked', label);
          assert.equal(r.headers['cache-control'], 'private, no-store', label);
          if (!head) visits++;
        }
        if (expected === 404 && !head) assert.match(r.body, /Link not found/, label);
        if (expected === 410) assert.match(r.body, /This link has expired/, label);
      }
      assert.equal(await visitsOf(h.shortener, code), visits, 'only the redirects that answered 302 counted');
      assert.equal(visits, publicRedirects ? 9 : 2);
      // Outside the base path a code is an unknown path: gated either way.
      if (p) assert401(await h.req(`/${code}`), 'missing', 'outside the base path');
      // /auth-check keeps its exact body (docs/security.md, the UI and the token): it tells the UI
      // about the API, not the links.
      assert.equal((await h.req(`${p}/auth-check`)).body, '{"auth_required":true}');
    });
  }
}

describe('with the gate off, public_redirects changes nothing', () => {
  for (const publicRedirects of [false, true]) {
    test(`public_redirects ${publicRedirects}: every spelling redirects, no token asked`, async (t) => {
      const h = await start(t, { publicRedirects });
      const code = await h.shorten('https://example.com/open');
      for (const [method, target] of [
        ['GET', `/${code}`],
        ['HEAD', `/${code}`],
        ['GET', `/${code}/?x=1`],
        ['GET', `/${code}?x`],
      ] as const) {
        const r = await h.req(target, { method });
        assert.equal(r.status, 302, `${method} ${target}`);
        assert.equal(r.headers.location, 'https://example.com/open');
      }
      assert.equal((await h.req('/zzzzzz')).status, 404);
      assert.equal(await visitsOf(h.shortener, code), 3);
      assert.equal((await h.req('/auth-check')).body, '{"auth_required":false}');
    });
  }
});
