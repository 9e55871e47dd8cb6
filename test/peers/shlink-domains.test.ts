/**
 * Shlink's domains (docs/compat.md), driven by Shlink's official JS SDK on both stores: the list of
 * domains with their redirects and the change of one's, and `domain` on a create, a read, an edit,
 * a delete, a link's visits and the list, as Shlink's clients send it. Shlink's three redirects are
 * the service's `base_url`, and `not_found` with `expired` as its `invalidShortUrlRedirect`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start, type Harness } from '../support/helpers.ts';
import { openOnDatabase } from '../support/pg-app.ts';
import { NO_POSTGRES, pgServer } from '../support/pg.ts';
import { ErrorType, problemOf, shlinkClient } from '../support/shlink-sdk.ts';

const KEY = 'k1';
const GO = 'go.example';
const SETTINGS = { shlinkApi: true, apiKeys: [KEY], domains: [GO], logLevel: 'silent' } as const;

const pg = await pgServer();

async function assertDomains(h: Pick<Harness, 'req' | 'shortener'>): Promise<void> {
  const base = h.shortener.config.baseUrl;
  const host = new URL(base).host;
  const sdk = shlinkClient(base, KEY);
  const none = { baseUrlRedirect: null, regular404Redirect: null, invalidShortUrlRedirect: null };
  assert.deepEqual(await sdk.listDomains(), {
    data: [
      { domain: host, isDefault: true, redirects: none },
      { domain: GO, isDefault: false, redirects: none },
    ],
    defaultRedirects: none,
  });
  assert.deepEqual(
    await sdk.editDomainRedirects({ domain: GO, baseUrlRedirect: 'https://home.example/', invalidShortUrlRedirect: 'https://home.example/404' }),
    {
      baseUrlRedirect: 'https://home.example/',
      regular404Redirect: null,
      invalidShortUrlRedirect: 'https://home.example/404',
    },
  );
  const listed = await sdk.listDomains();
  assert.deepEqual(listed.data[1], {
    domain: GO,
    isDefault: false,
    redirects: { baseUrlRedirect: 'https://home.example/', regular404Redirect: null, invalidShortUrlRedirect: 'https://home.example/404' },
  });
  // invalidShortUrlRedirect is where both unknown codes and expired links of the domain go.
  const domains = await h.req('/api/domains', { headers: { 'x-api-key': KEY } });
  assert.deepEqual(JSON.parse(domains.body).domains[1].redirects, {
    base_url: 'https://home.example/',
    not_found: 'https://home.example/404',
    expired: 'https://home.example/404',
  });
  const refused = await problemOf(sdk.editDomainRedirects({ domain: GO, regular404Redirect: 'https://home.example/other' }));
  assert.deepEqual([refused.type, refused.status], [ErrorType.INVALID_ARGUMENT, 400]);
  const unknown = await problemOf(sdk.editDomainRedirects({ domain: 'x.example', baseUrlRedirect: null }));
  assert.deepEqual([unknown.type, unknown.status, unknown.detail], [ErrorType.INVALID_ARGUMENT, 400, 'x.example is not a domain of this service']);

  // One custom slug on both domains.
  const onDefault = await sdk.createShortUrl({ longUrl: 'https://example.com/default', customSlug: 'slug-1' });
  const onGo = await sdk.createShortUrl({ longUrl: 'https://example.com/go', customSlug: 'slug-1', domain: GO });
  assert.deepEqual([onDefault.domain, onDefault.shortUrl], [null, `${base}/slug-1`]);
  assert.deepEqual([onGo.domain, onGo.shortUrl], [GO, `http://${GO}/slug-1`]);
  const other = await problemOf(sdk.createShortUrl({ longUrl: 'https://example.com/x', domain: 'x.example' }));
  assert.deepEqual([other.type, other.status], [ErrorType.INVALID_ARGUMENT, 400]);
  // findIfExists finds a link of the domain asked for only.
  const found = await sdk.createShortUrl({ longUrl: 'https://example.com/go', domain: GO, findIfExists: true });
  assert.deepEqual([found.shortCode, found.domain], ['slug-1', GO]);
  const notThere = await sdk.createShortUrl({ longUrl: 'https://example.com/go', findIfExists: true });
  assert.deepEqual([notThere.domain, notThere.shortCode === 'slug-1'], [null, false]);

  assert.equal((await sdk.getShortUrl({ shortCode: 'slug-1', domain: GO })).longUrl, 'https://example.com/go');
  assert.equal((await sdk.getShortUrl({ shortCode: 'slug-1' })).longUrl, 'https://example.com/default');
  const edited = await sdk.updateShortUrl({ shortCode: 'slug-1', domain: GO }, { longUrl: 'https://example.com/go2' });
  assert.deepEqual([edited.domain, edited.longUrl], [GO, 'https://example.com/go2']);
  assert.equal((await sdk.getShortUrl({ shortCode: 'slug-1' })).longUrl, 'https://example.com/default');

  // A visit on the domain's host is that link's.
  assert.equal((await h.req('/slug-1', { headers: { host: GO } })).headers.location, 'https://example.com/go2');
  assert.equal((await sdk.getShortUrlVisits({ shortCode: 'slug-1', domain: GO })).pagination.totalItems, 1);
  assert.equal((await sdk.getShortUrlVisits({ shortCode: 'slug-1' })).pagination.totalItems, 0);

  const codes = async (domain?: string): Promise<string[]> =>
    (await sdk.listShortUrls(domain === undefined ? {} : { domain })).data.map((u) => `${u.domain ?? 'DEFAULT'}/${u.shortCode}`).sort();
  assert.deepEqual(await codes(GO), [`${GO}/slug-1`]);
  assert.equal((await codes('DEFAULT')).length, 2);
  assert.equal((await codes()).length, 3);
  assert.deepEqual(await codes('x.example'), [], 'a domain of no link lists none');

  await sdk.deleteShortUrl({ shortCode: 'slug-1', domain: GO });
  const gone = await problemOf(sdk.getShortUrl({ shortCode: 'slug-1', domain: GO }));
  assert.equal(gone.type, ErrorType.INVALID_SHORTCODE);
  assert.equal((await sdk.getShortUrl({ shortCode: 'slug-1' })).longUrl, 'https://example.com/default');
  // The domain's redirect now answers its unknown code.
  const redirected = await h.req('/slug-1', { headers: { host: GO } });
  assert.deepEqual([redirected.status, redirected.headers.location], [302, 'https://home.example/404']);
}

test("Shlink's SDK lists and edits domains, and names a link's domain on every call (log store)", async (t) => {
  await assertDomains(await start(t, SETTINGS));
});

test("Shlink's SDK lists and edits domains, and names a link's domain on every call (PostgreSQL)", {
  ...(pg ? {} : { skip: NO_POSTGRES }),
  timeout: 60_000,
}, async (t) => {
  const app = await openOnDatabase(SETTINGS, await pg!.createDatabase());
  t.after(() => app.close());
  await assertDomains(app);
});
