/**
 * The peers' surfaces in /openapi.json (docs/compat.md): with Shlink's and YOURLS' APIs on, behind
 * the gate, every operation they document is called live, made to answer each documented status it
 * can, and every answer must match its documentation — status, headers, media type and body (JSON
 * bodies checked by ajv against the document's own schemas, problem details included). /docs shows
 * their tags and Shlink's credential.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { OpenApiDocument, OpenApiObject, Operation } from '../../src/published/openapi.ts';
import { codeOf, open, type Harness, type RequestOptions } from '../support/helpers.ts';
import { fillableDisk } from '../support/disk-full.ts';
import { onOneProcess } from '../support/cluster.ts';

const KEY = 'k1';
/** The server's other domain (DOMAINS), whose redirects Shlink's door sets. */
const GO = 'go.example';
const TOKEN = 'the-gate-token';
const BEARER = { authorization: `Bearer ${TOKEN}` };
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

interface Probe {
  path: string;
  options?: RequestOptions;
  status: number;
  /** Writes fail (disk full) while this request is served. */
  diskFull?: true;
}

/** The probes of one operation; `unexercised` names documented statuses no probe provokes, and why. */
interface OperationPlan {
  probes: Probe[];
  unexercised?: Readonly<Record<number, string>>;
}

const BUG = { 500: 'the generic answer to a bug' };
const DOWN = 'a store that cannot be read (a database down: test/peers/peer-outage.test.ts)';
const RATE_LIMITED = 'only with CREATE_RATE_LIMIT (the door conformance suite, test/doors/)';
const BIG = JSON.stringify({ longUrl: `https://example.com/${'x'.repeat(70 * 1024)}` });
/** Shlink's rules of every shape a condition takes: a value, a key and a value, a key alone, a date. */
const RULES = JSON.stringify({
  redirectRules: [
    {
      longUrl: 'https://example.com/ios-fr',
      conditions: [
        { type: 'device', matchKey: null, matchValue: 'ios' },
        { type: 'language', matchKey: null, matchValue: 'fr' },
      ],
    },
    {
      longUrl: 'https://example.com/campaign',
      conditions: [
        { type: 'query-param', matchKey: 'utm', matchValue: 'spring' },
        { type: 'valueless-query-param', matchKey: 'ref', matchValue: null },
        { type: 'after-date', matchKey: null, matchValue: '2026-01-01T00:00:00+00:00' },
      ],
    },
  ],
});

interface Fixture {
  keep: string;
  doomed: string;
  taken: string;
  /** A link with redirect rules, validity and a forwarded query. */
  ruled: string;
  /** Secrets of stored keys whose role may not read (`creator`) or change anything (`viewer`): the 403 of a role too low. */
  creator: string;
  viewer: string;
}

/** Shlink's operations, by operationId: one row each, or the test fails. */
function shlinkPlan(f: Fixture): Record<string, OperationPlan> {
  const key = { 'x-api-key': KEY };
  const get = (path: string, status: number, headers: Record<string, string> = key): Probe => ({ path, options: { headers }, status });
  const send = (method: string, path: string, body: string, status: number, extra: Partial<Probe> & { headers?: Record<string, string> } = {}): Probe => {
    const { headers = key, ...rest } = extra;
    return { path, options: { method, headers: { ...headers, 'content-type': 'application/json' }, body }, status, ...rest };
  };
  const v3 = '/rest/v3';
  /** The catch-all's operations of one path: 401 without a key (the gate is on), 404 with one. */
  const unknown = (name: string, path: string): Record<string, OperationPlan> =>
    Object.fromEntries(
      ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((method) => [
        `shlink${name}${method[0]}${method.slice(1).toLowerCase()}`,
        { probes: [send(method, path, '', 401, { headers: {} }), send(method, path, '', 404)] },
      ]),
    );
  return {
    shlinkHealth: { probes: [get('/rest/health', 200, {})], unexercised: { 503: 'only while loading or shutting down (test/peers/shlink.test.ts)' } },
    shlinkHealthV3: { probes: [get(`${v3}/health`, 200, {})], unexercised: { 503: 'as /rest/health' } },
    shlinkListShortUrls: {
      probes: [
        get(`${v3}/short-urls`, 200),
        get(`${v3}/short-urls?orderBy=title-DESC&tags[]=kept&searchTerm=KEEP&itemsPerPage=-1`, 200),
        get(`${v3}/short-urls?itemsPerPage=0`, 400),
        get(`${v3}/short-urls`, 401, {}),
        get(`${v3}/short-urls`, 401, { 'x-api-key': 'wrong' }),
        get(`${v3}/short-urls`, 403, { 'x-api-key': f.creator }),
      ],
      unexercised: { 503: DOWN },
    },
    shlinkCreateShortUrl: {
      probes: [
        send('POST', `${v3}/short-urls`, '{"longUrl":"https://example.com/made","tags":["b","a"],"title":"Made","maxVisits":3,"validUntil":"2030-01-01"}', 200),
        send('POST', `${v3}/short-urls`, '{"longUrl":"https://example.com/made","findIfExists":true}', 200),
        send('POST', `${v3}/short-urls`, '{"longUrl":"ftp://example.com/"}', 400),
        send('POST', `${v3}/short-urls`, `{"longUrl":"https://example.com/t","customSlug":"${f.taken}"}`, 400),
        send('POST', `${v3}/short-urls`, '{nope', 400),
        send('POST', `${v3}/short-urls`, '[]', 400),
        send('POST', `${v3}/short-urls`, '{"longUrl":"https://example.com/"}', 401, { headers: {} }),
        send('POST', `${v3}/short-urls`, '{"longUrl":"https://example.com/"}', 403, { headers: { 'x-api-key': f.viewer } }),
        send('POST', `${v3}/short-urls`, BIG, 413),
        send('POST', `${v3}/short-urls`, '{"longUrl":"https://example.com/full"}', 503, { diskFull: true }),
      ],
      unexercised: { 429: RATE_LIMITED },
    },
    shlinkGetShortUrl: {
      probes: [
        get(`${v3}/short-urls/${f.keep}`, 200),
        get(`${v3}/short-urls/zzzzzz`, 404),
        get(`${v3}/short-urls/${f.keep}`, 401, {}),
        get(`${v3}/short-urls/${f.keep}`, 403, { 'x-api-key': f.creator }),
      ],
      unexercised: { 503: DOWN },
    },
    shlinkEditShortUrl: {
      probes: [
        send('PATCH', `${v3}/short-urls/${f.keep}`, '{"title":"Kept, edited","maxVisits":null,"validUntil":"2031-06-01T12:00:00Z"}', 200),
        send('PATCH', `${v3}/short-urls/${f.keep}`, '{"validSince":"2020-01-01","forwardQuery":true}', 200),
        send('PATCH', `${v3}/short-urls/${f.keep}`, '{"validSince":"soon"}', 400),
        send('PATCH', `${v3}/short-urls/${f.keep}`, '"text"', 400),
        send('PATCH', `${v3}/short-urls/zzzzzz`, '{"title":"x"}', 404),
        send('PATCH', `${v3}/short-urls/${f.keep}`, '{"title":"x"}', 401, { headers: {} }),
        send('PATCH', `${v3}/short-urls/${f.keep}`, '{"title":"x"}', 403, { headers: { 'x-api-key': f.viewer } }),
        send('PATCH', `${v3}/short-urls/${f.keep}`, BIG, 413),
        send('PATCH', `${v3}/short-urls/${f.keep}`, '{"title":"full"}', 503, { diskFull: true }),
      ],
    },
    shlinkDeleteShortUrl: {
      probes: [
        send('DELETE', `${v3}/short-urls/${f.doomed}`, '', 401, { headers: {} }),
        send('DELETE', `${v3}/short-urls/${f.doomed}`, '', 403, { headers: { 'x-api-key': f.viewer } }),
        send('DELETE', `${v3}/short-urls/${f.doomed}`, '', 503, { diskFull: true }),
        send('DELETE', `${v3}/short-urls/${f.doomed}`, '', 204),
        send('DELETE', `${v3}/short-urls/${f.doomed}`, '', 404),
      ],
    },
    shlinkListShortUrlVisits: {
      probes: [
        get(`${v3}/short-urls/${f.keep}/visits`, 200),
        get(`${v3}/short-urls/${f.keep}/visits?page=1&itemsPerPage=1&excludeBots`, 200),
        get(`${v3}/short-urls/${f.keep}/visits?startDate=yesterday`, 400),
        get(`${v3}/short-urls/zzzzzz/visits`, 404),
        get(`${v3}/short-urls/${f.keep}/visits`, 401, {}),
        get(`${v3}/short-urls/${f.keep}/visits`, 403, { 'x-api-key': f.creator }),
      ],
      unexercised: { 503: DOWN },
    },
    shlinkDeleteShortUrlVisits: {
      probes: [
        send('DELETE', `${v3}/short-urls/${f.keep}/visits`, '', 401, { headers: {} }),
        send('DELETE', `${v3}/short-urls/${f.keep}/visits`, '', 403, { headers: { 'x-api-key': f.viewer } }),
        send('DELETE', `${v3}/short-urls/${f.keep}/visits`, '', 503, { diskFull: true }),
        send('DELETE', `${v3}/short-urls/${f.keep}/visits`, '', 200),
        send('DELETE', `${v3}/short-urls/zzzzzz/visits`, '', 404),
      ],
    },
    shlinkGetRedirectRules: {
      probes: [
        get(`${v3}/short-urls/${f.keep}/redirect-rules`, 200),
        get(`${v3}/short-urls/${f.ruled}/redirect-rules`, 200),
        get(`${v3}/short-urls/zzzzzz/redirect-rules`, 404),
        get(`${v3}/short-urls/${f.keep}/redirect-rules`, 401, {}),
        get(`${v3}/short-urls/${f.keep}/redirect-rules`, 403, { 'x-api-key': f.creator }),
      ],
      unexercised: { 503: DOWN },
    },
    shlinkSetRedirectRules: {
      probes: [
        send('POST', `${v3}/short-urls/${f.keep}/redirect-rules`, RULES, 200),
        send('POST', `${v3}/short-urls/${f.keep}/redirect-rules`, '{"redirectRules":[{"longUrl":"https://example.com/"}]}', 400),
        send('POST', `${v3}/short-urls/${f.keep}/redirect-rules`, '"text"', 400),
        send('POST', `${v3}/short-urls/${f.keep}/redirect-rules`, RULES, 503, { diskFull: true }),
        send('POST', `${v3}/short-urls/zzzzzz/redirect-rules`, '{}', 404),
        send('POST', `${v3}/short-urls/${f.keep}/redirect-rules`, '{}', 401, { headers: {} }),
        send('POST', `${v3}/short-urls/${f.keep}/redirect-rules`, '{}', 403, { headers: { 'x-api-key': f.viewer } }),
        send('POST', `${v3}/short-urls/${f.keep}/redirect-rules`, BIG, 413),
      ],
    },
    shlinkVisitsOverview: {
      probes: [get(`${v3}/visits`, 200), get(`${v3}/visits`, 401, {}), get(`${v3}/visits`, 403, { 'x-api-key': f.creator })],
      unexercised: { 503: DOWN },
    },
    shlinkListOrphanVisits: {
      probes: [
        get(`${v3}/visits/orphan`, 200),
        get(`${v3}/visits/orphan?page=2&itemsPerPage=1&excludeBots&startDate=2020-01-01&endDate=2099-01-01T00:00:00Z`, 200),
        get(`${v3}/visits/orphan?itemsPerPage=-1`, 200, { 'x-api-key': f.viewer }),
        get(`${v3}/visits/orphan?startDate=yesterday`, 400),
        get(`${v3}/visits/orphan?startDate=2030-01-02&endDate=2030-01-01`, 400),
        get(`${v3}/visits/orphan`, 401, {}),
        get(`${v3}/visits/orphan`, 401, { 'x-api-key': 'wrong' }),
        get(`${v3}/visits/orphan`, 403, { 'x-api-key': f.creator }),
      ],
      unexercised: {
        503: 'a store that cannot be read: the log store reads the orphan visits from memory, so a full disk does not fail it; a PostgreSQL outage does, which no test provokes yet (test/peers/peer-outage.test.ts lists no orphan route)',
      },
    },
    shlinkListTags: {
      probes: [
        get(`${v3}/tags?searchTerm=KE`, 200),
        get(`${v3}/tags?orderBy=visits-ASC`, 400),
        get(`${v3}/tags`, 401, {}),
        get(`${v3}/tags`, 403, { 'x-api-key': f.creator }),
      ],
      unexercised: { 503: DOWN },
    },
    shlinkTagsStats: {
      probes: [
        get(`${v3}/tags/stats?orderBy=visits-DESC&itemsPerPage=1`, 200),
        get(`${v3}/tags/stats?orderBy=nope`, 400),
        get(`${v3}/tags/stats`, 401, {}),
        get(`${v3}/tags/stats`, 403, { 'x-api-key': f.creator }),
      ],
      unexercised: { 503: DOWN },
    },
    shlinkListDomains: {
      probes: [get(`${v3}/domains`, 200), get(`${v3}/domains`, 200, { 'x-api-key': f.creator }), get(`${v3}/domains`, 401, {})],
      unexercised: { 503: DOWN },
    },
    shlinkSetDomainRedirects: {
      probes: [
        send(
          'PATCH',
          `${v3}/domains/redirects`,
          `{"domain":"${GO}","baseUrlRedirect":"https://home.example/","invalidShortUrlRedirect":"https://home.example/404"}`,
          200,
        ),
        send('PATCH', `${v3}/domains/redirects`, `{"domain":"${GO}","invalidShortUrlRedirect":null,"regular404Redirect":null}`, 200),
        send('PATCH', `${v3}/domains/redirects`, '{"domain":"nowhere.example","baseUrlRedirect":null}', 400),
        send('PATCH', `${v3}/domains/redirects`, `{"domain":"${GO}","regular404Redirect":"https://home.example/other"}`, 400),
        send('PATCH', `${v3}/domains/redirects`, `{"domain":"${GO}","baseUrlRedirect":"ftp://home.example/"}`, 400),
        send('PATCH', `${v3}/domains/redirects`, '{"baseUrlRedirect":null}', 400),
        send('PATCH', `${v3}/domains/redirects`, '{nope', 400),
        send('PATCH', `${v3}/domains/redirects`, `{"domain":"${GO}","baseUrlRedirect":null}`, 401, { headers: {} }),
        send('PATCH', `${v3}/domains/redirects`, `{"domain":"${GO}","baseUrlRedirect":null}`, 403, { headers: { 'x-api-key': f.viewer } }),
        send('PATCH', `${v3}/domains/redirects`, BIG, 413),
        send('PATCH', `${v3}/domains/redirects`, `{"domain":"${GO}","baseUrlRedirect":"https://home.example/full"}`, 503, { diskFull: true }),
      ],
    },
    shlinkMercureInfo: { probes: [get(`${v3}/mercure-info`, 501), get(`${v3}/mercure-info`, 401, {})] },
    ...unknown('UnknownRoot', '/rest'),
    ...unknown('Unknown', '/rest/v2/short-urls'),
  };
}

/** YOURLS' operations: the GET with a query, the POST with a form. */
function yourlsPlan(f: Fixture): Record<string, OperationPlan> {
  const q = (params: string, status: number, extra: Partial<Probe> = {}): Probe => ({ path: `/yourls-api.php?${params}`, status, ...extra });
  const form = (params: string, status: number, extra: Partial<Probe> = {}): Probe => ({
    path: '/yourls-api.php',
    options: { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: params },
    status,
    ...extra,
  });
  const url = (path: string): string => encodeURIComponent(`https://example.com/${path}`);
  return {
    yourlsApi: {
      probes: [
        q(`signature=${KEY}&action=shorturl&url=${url('y-get')}&keyword=y-get-code&title=T&format=json`, 200),
        q(`signature=${KEY}&action=expand&shorturl=${f.keep}&format=json`, 200),
        q(`signature=${KEY}&action=url-stats&shorturl=${f.keep}&format=json&callback=cb`, 200),
        q(`signature=${KEY}&action=stats&filter=top&limit=5&format=json`, 200),
        q(`signature=${KEY}&action=db-stats&format=json`, 200),
        q(`signature=${KEY}&action=version&db=1&format=json`, 200),
        q(`signature=${KEY}&action=version`, 200),
        q(`signature=${KEY}&action=version&format=simple`, 200),
        q(`signature=${KEY}&action=version&format=jsonp&callback=cb`, 200),
        q(`signature=${KEY}&action=nope&format=json`, 400),
        q(`signature=${KEY}&action=shorturl&url=${url('y-get')}&format=json`, 400),
        q(`signature=${KEY}&action=version&format=jsonp&callback=1bad`, 400),
        q('action=version&format=json', 403),
        q('action=version&format=xml&username=u&password=p', 403),
        q(`signature=${f.creator}&action=stats&filter=top&limit=5&format=json`, 403),
        q(`signature=${KEY}&action=expand&shorturl=zzzzzz&format=json`, 404),
        q(`signature=${KEY}&action=url-stats&shorturl=zzzzzz&format=json`, 404),
        q(`signature=${KEY}&action=shorturl&url=${url('y-full')}&format=json`, 503, { diskFull: true }),
      ],
      unexercised: { 429: RATE_LIMITED },
    },
    yourlsApiForm: {
      probes: [
        form(`signature=${KEY}&action=shorturl&url=${url('y-post')}&format=json`, 200),
        form(`signature=${KEY}&action=nope&format=json`, 400),
        form('action=version&format=json', 403),
        form(`signature=${KEY}&action=expand&shorturl=zzzzzz&format=json`, 404),
        form(`signature=${KEY}&action=version&pad=${'x'.repeat(70 * 1024)}`, 413),
        form(`signature=${KEY}&action=shorturl&url=${url('y-post-full')}&format=json`, 503, { diskFull: true }),
      ],
      unexercised: { 429: RATE_LIMITED },
    },
  };
}

function resolve(doc: OpenApiDocument, o: OpenApiObject): OpenApiObject {
  const target = o['$ref'];
  if (typeof target !== 'string') return o;
  const [, , kind, name] = target.split('/') as [string, string, keyof OpenApiDocument['components'], string];
  const found = doc.components[kind][name];
  assert.ok(found, target);
  return found;
}

describe('the peers documented == served, live', onOneProcess('it fills its disk for the documented 503s'), () => {
  let h: Harness;
  let doc: OpenApiDocument;
  const { fs, disk } = fillableDisk();
  before(async () => {
    h = await open({ apiKeys: [KEY], apiToken: TOKEN, shlinkApi: true, yourlsApi: true, domains: [GO], fs });
    const r = await h.req('/openapi.json', { headers: BEARER });
    assert.equal(r.status, 200);
    doc = JSON.parse(r.body) as OpenApiDocument;
  });
  after(() => h.close());

  test("every operation of Shlink's and YOURLS' is exercised, with each documented status it can answer, and every answer matches its documentation", async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema(
      JSON.parse(
        JSON.stringify({ $id: 'https://openapi.invalid/doc', $defs: doc.components.schemas }).replaceAll('#/components/schemas/', '#/$defs/'),
      ) as object,
    );
    const shorten = async (body: Record<string, unknown>): Promise<string> => {
      const r = await h.req('/api/shorten', { method: 'POST', headers: { ...BEARER, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(r.status, 201, r.body);
      return codeOf(r);
    };
    const makeKey = async (role: string): Promise<string> => {
      const r = await h.req('/api/keys', {
        method: 'POST',
        headers: { ...BEARER, 'x-api-key': KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ name: role, role }),
      });
      assert.equal(r.status, 201, r.body);
      return (JSON.parse(r.body) as { key: string }).key;
    };
    const fixture: Fixture = {
      keep: await shorten({ url: 'https://example.com/keep', title: 'Kept — Ünïcödé 😀', tags: ['kept', 'labelled'], max_visits: 50, retention_days: 30 }),
      doomed: await shorten({ url: 'https://example.com/doomed' }),
      taken: await shorten({ url: 'https://example.com/taken', code: 'taken-code' }),
      // Every routing field Shlink's shapes show: rules, validity and a forwarded query.
      ruled: await shorten({
        url: 'https://example.com/ruled',
        rules: [{ url: 'https://example.com/android', conditions: [{ type: 'device', value: 'android' }] }],
        valid_since: 1_700_000_000,
        valid_until: 4_000_000_000,
        forward_query: true,
      }),
      creator: await makeKey('creator'),
      viewer: await makeKey('viewer'),
    };
    const visit = {
      headers: { ...BEARER, 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0', referer: 'https://news.example/a' },
    };
    assert.equal((await h.req(`/${fixture.keep}`, visit)).status, 302);
    // Orphan visits (docs/analytics.md), one of each type: an unknown code, a used-up link, another domain's GET /.
    const once = await shorten({ url: 'https://example.com/once', max_visits: 1 });
    assert.equal((await h.req(`/${once}`, { headers: BEARER })).status, 302);
    assert.equal((await h.req('/nope42', { headers: BEARER })).status, 404);
    assert.equal((await h.req(`/${once}`, { headers: BEARER })).status, 410);
    assert.equal((await h.req('/', { headers: { ...BEARER, host: GO } })).status, 404);
    // They are written in the background: the pages the probes read are not empty once they have landed.
    let orphans = 0;
    for (let i = 0; i < 100 && orphans !== 3; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      const r = await h.req('/rest/v3/visits/orphan', { headers: { 'x-api-key': KEY } });
      orphans = (JSON.parse(r.body) as { visits: { pagination: { totalItems: number } } }).visits.pagination.totalItems;
    }
    assert.equal(orphans, 3, 'the three orphan visits have landed');
    const rows = { ...shlinkPlan(fixture), ...yourlsPlan(fixture) };
    const ops = Object.entries(doc.paths).flatMap(([path, item]) =>
      METHODS.flatMap((method) => {
        const op: Operation | undefined = item[method];
        return op && (op.tags.includes('Shlink') || op.tags.includes('YOURLS')) ? [{ path, method: method.toUpperCase(), op }] : [];
      }),
    );
    assert.deepEqual(ops.map((o) => o.op.operationId).sort(), Object.keys(rows).sort(), "one row per operation of the peers' surfaces");

    for (const { path, method, op } of ops) {
      const row = rows[op.operationId]!;
      const seen = new Set<string>();
      for (const probe of row.probes) {
        const label = `${op.operationId} ${probe.options?.method ?? 'GET'} ${probe.path.slice(0, 80)}`;
        assert.equal(probe.options?.method ?? 'GET', method, label);
        disk.full = probe.diskFull === true;
        let r;
        try {
          r = await h.req(probe.path, probe.options);
        } finally {
          disk.full = false;
        }
        assert.equal(r.status, probe.status, `${label}: ${r.body.slice(0, 200)}`);
        seen.add(String(r.status));
        const documented = op.responses[String(r.status)];
        assert.ok(documented, `${method} ${path} answered ${r.status}, not documented (${Object.keys(op.responses).join(', ')})`);
        const response = resolve(doc, documented);
        for (const name of Object.keys((response['headers'] as object | undefined) ?? {})) {
          assert.ok(r.headers[name.toLowerCase()] !== undefined, `${label}: header ${name} missing`);
        }
        const content = response['content'] as Record<string, { schema?: OpenApiObject }> | undefined;
        const type = String(r.headers['content-type'] ?? '');
        if (!content) {
          assert.equal(r.body, '', `${label}: documented without a body`);
          continue;
        }
        const media = Object.keys(content).find((t) => t === type.split(';')[0]);
        assert.ok(media, `${label}: content type ${type} not documented (${Object.keys(content).join(', ')})`);
        const schema = JSON.parse(
          JSON.stringify(content[media]!.schema ?? {}).replaceAll('#/components/schemas/', 'https://openapi.invalid/doc#/$defs/'),
        ) as object;
        const validate = ajv.compile(schema);
        const value: unknown = media === 'application/json' || media.endsWith('+json') ? JSON.parse(r.body) : r.body;
        assert.ok(validate(value), `${label}: ${JSON.stringify(validate.errors)} ${r.body.slice(0, 300)}`);
      }
      const missed = Object.keys(op.responses).filter((s) => !seen.has(s) && !(s in BUG) && row.unexercised?.[Number(s)] === undefined);
      assert.deepEqual(missed, [], `${op.operationId}: documented statuses no probe provoked`);
    }
  });

  test('on every path of the peers, an undocumented method is 405 whose Allow lists the documented ones; under /rest any other path answers every method', async () => {
    const key = { ...BEARER, 'x-api-key': KEY };
    const paths = Object.entries(doc.paths).filter(([path]) => path.startsWith('/rest') || path === '/yourls-api.php');
    assert.ok(paths.length >= 14, `${paths.length} paths`);
    for (const [path, item] of paths) {
      const r = await h.req(path.replace('{code}', 'abc123').replace('{shlink_path}', 'v1/anything'), { method: 'PUT', headers: key });
      if (path === '/rest' || path === '/rest/{shlink_path}') {
        assert.equal(r.status, 404, path);
        assert.equal(r.headers['content-type'], 'application/problem+json', path);
        continue;
      }
      assert.equal(r.status, 405, path);
      const allow = String(r.headers.allow)
        .split(', ')
        .filter((m) => m !== 'HEAD' && m !== 'OPTIONS');
      assert.deepEqual(
        allow,
        METHODS.filter((m) => item[m] !== undefined).map((m) => m.toUpperCase()),
        path,
      );
    }
  });

  test("the schemas do catch an answer that is not Shlink's shape", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema(
      JSON.parse(
        JSON.stringify({ $id: 'https://openapi.invalid/doc', $defs: doc.components.schemas }).replaceAll('#/components/schemas/', '#/$defs/'),
      ) as object,
    );
    const problem = ajv.getSchema('https://openapi.invalid/doc#/$defs/ShlinkProblem')!;
    assert.equal(problem({ detail: 'no such link' }), false, "the REST door's {detail} is no problem");
    assert.equal(problem({ type: 'about:blank', title: 'Service Unavailable', detail: 'database unavailable', status: 503 }), true);
    const shortUrl = ajv.getSchema('https://openapi.invalid/doc#/$defs/ShlinkShortUrl')!;
    assert.equal(shortUrl({ shortCode: 'abc', shortUrl: 'https://s.example/abc' }), false, 'a partial ShortUrl');
  });

  test("/docs shows the peers' tags, and that Shlink's routes take X-Api-Key instead of the gate", async () => {
    const html = (await h.req('/docs', { headers: BEARER })).body;
    assert.match(html, /<section id="tag-Shlink">/);
    assert.match(html, /<section id="tag-YOURLS">/);
    const health = html.slice(html.indexOf('id="op-shlinkHealth"'), html.indexOf('</article>', html.indexOf('id="op-shlinkHealth"')));
    assert.match(health, /<p class="access">Public\.<\/p>/);
    const list = html.slice(html.indexOf('id="op-shlinkListShortUrls"'), html.indexOf('</article>', html.indexOf('id="op-shlinkListShortUrls"')));
    assert.match(list, /<p class="access">Shlink&#39;s credential \(SHLINK_API=true\): an API key of this service/);
    assert.doesNotMatch(list, /Authorization: Bearer/);
  });
});
