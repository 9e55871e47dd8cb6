/**
 * /docs (docs/api.md, OpenAPI and /docs): an HTML reference rendered on the server from the OpenAPI
 * document. It must reference nothing off-origin, carry no script and no inline style (the CSP
 * forbids them), link every anchor it offers, list every operation and the deprecations, and escape
 * every text.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { DEPRECATIONS } from '../../src/published/deprecations.ts';
import { renderDocs } from '../../src/published/docs.ts';
import { createLogger } from '../../src/log.ts';
import { TOOLS } from '../../src/mcp/tools.ts';
import { openApiDocument, type OpenApiDocument } from '../../src/published/openapi.ts';
import { createResponder, escapeHtml } from '../../src/http/respond.ts';
import { routeTable } from '../../src/route-table.ts';
import type { Service } from '../../src/links/service.ts';
import { VERSION } from '../../src/version.ts';
import { start } from '../support/helpers.ts';

const NOTICE_SCHEMA: unknown = JSON.parse(readFileSync(new URL('../../schemas/v2/DeprecationNoticeNotification.json', import.meta.url), 'utf8'));

/** The document of a table; `peers`: the peers' surfaces turned on (docs/compat.md). */
function buildDoc(baseUrl: string, peers: { shlinkApi?: boolean; yourlsApi?: boolean } = {}): OpenApiDocument {
  const routes = routeTable({
    service: {} as Service,
    reply: createResponder([]),
    files: new Map(),
    config: { production: false, apiToken: '', mcpAllowedOrigins: [], maxBodyBytes: 65536, baseUrl, ...peers },
    log: createLogger('silent'),
  });
  return openApiDocument(routes, { baseUrl, version: VERSION, noticeSchema: NOTICE_SCHEMA });
}

/** Every attribute that can make a browser fetch or navigate. */
const URL_ATTRIBUTE = /\s(src|href|srcset|action|formaction|poster|data|background)\s*=\s*("([^"]*)"|'([^']*)'|[^\s>]+)/gi;

/** The URL attributes of every tag (escaped text never holds a raw `<`, so it is not a tag). */
function urlsOf(html: string): string[] {
  return [...html.matchAll(/<[a-z][^>]*>/gi)].flatMap(([tag]) =>
    [...tag.matchAll(URL_ATTRIBUTE)].map((m) => {
      assert.ok(m[3] !== undefined, `unquoted or single-quoted attribute: ${m[0]}`);
      return m[3];
    }),
  );
}

function assertSelfContained(html: string, basePath: string): void {
  const urls = urlsOf(html);
  assert.ok(urls.length > 40, `${urls.length} links`);
  for (const url of urls) {
    // Same-origin: a path starting with one slash (never `//host`), or a fragment of this page.
    assert.match(url, /^(#[\w-]+|\/(?!\/)[^\s:]*)$/, url);
    if (url.startsWith('/')) assert.ok(url.startsWith(`${basePath}/`), `${url} outside ${basePath}/`);
  }
  assert.doesNotMatch(html, /<script/i);
  assert.doesNotMatch(html, /<style/i);
  const tags = [...html.matchAll(/<[a-z][^>]*>/gi)].map(([tag]) => tag);
  for (const tag of tags) {
    assert.doesNotMatch(tag, /\sstyle\s*=/i, tag);
    assert.doesNotMatch(tag, /\son[a-z]+\s*=/i, `no event handler attributes: ${tag}`);
  }
  assert.doesNotMatch(html, /<(iframe|object|embed|base|form)\b/i);
  // Every fragment link lands on an element of the page.
  const ids = new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]));
  for (const url of urls.filter((u) => u.startsWith('#'))) assert.ok(ids.has(url.slice(1)), `dangling ${url}`);
}

test('renderDocs: self-contained, navigable, one entry per operation, the deprecations and the MCP tools', () => {
  const doc = buildDoc('https://s.example');
  const html = renderDocs(doc);
  assert.match(html, /^<!doctype html>\n<html lang="en">/);
  assertSelfContained(html, '');
  assert.match(html, /<link rel="stylesheet" href="\/static\/docs\.css">/);
  assert.match(html, /<a href="\/openapi\.json">/);

  const operationIds = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
  // Every method of every route documents one operation, PATCH included.
  assert.ok(operationIds.includes('updateUrl'));
  assert.ok(operationIds.includes('importUrls'));
  assert.ok(operationIds.includes('importVisits'));
  assert.ok(operationIds.includes('listDomains'));
  assert.ok(operationIds.includes('setDomainRedirects'));
  assert.ok(operationIds.includes('listOrphanVisits'));
  assert.equal(operationIds.length, 45);
  for (const id of operationIds) {
    assert.equal(html.split(`<article id="op-${id}"`).length, 2, `one entry for ${id}`);
    assert.ok(html.includes(`<a href="#op-${id}">`), `contents link to ${id}`);
  }

  const section = /<section id="deprecations">([\s\S]*?)<\/section>/.exec(html)?.[1] ?? '';
  assert.ok(section, 'a #deprecations section');
  for (const d of DEPRECATIONS) {
    assert.ok(section.includes(`<article id="deprecation-${d.usage}">`), d.usage);
    assert.ok(section.includes(escapeHtml(d.notice.summary)), d.notice.summary);
    assert.ok(section.includes(`Deprecation: @${d.since}`), d.usage);
  }
  assert.ok(html.includes('<a href="#deprecations">Deprecations</a>'));

  for (const tool of TOOLS) {
    assert.ok(html.includes(`<td><code>${tool.name}</code></td>`), tool.name);
    assert.ok(html.includes(escapeHtml(tool.description)), tool.name);
  }
  assert.ok(html.includes('<code>https://s.example/mcp</code>'));
  // The deprecated operation is marked as such.
  assert.match(html, /<article id="op-shortenUrlWithGet" class="operation deprecated">/);
});

test("renderDocs with the peers' surfaces on: a section for each, one entry per operation, still self-contained", () => {
  const doc = buildDoc('https://s.example', { shlinkApi: true, yourlsApi: true });
  const html = renderDocs(doc);
  assertSelfContained(html, '');
  for (const tag of ['Shlink', 'YOURLS']) {
    assert.ok(html.includes(`<section id="tag-${tag}">`), tag);
    assert.ok(html.includes(`<a href="#tag-${tag}">${tag}</a>`), tag);
  }
  const peers = Object.values(doc.paths)
    .flatMap((item) => Object.values(item))
    .filter((op) => op.tags.includes('Shlink') || op.tags.includes('YOURLS'));
  assert.ok(peers.length >= 20, `${peers.length} operations`);
  for (const { operationId } of peers) assert.equal(html.split(`<article id="op-${operationId}"`).length, 2, operationId);
});

test('renderDocs prefixes same-origin links with the base path', () => {
  const html = renderDocs(buildDoc('https://s.example/short/x'));
  assertSelfContained(html, '/short/x');
  assert.match(html, /<link rel="stylesheet" href="\/short\/x\/static\/docs\.css">/);
  assert.match(html, /href="\/short\/x\/schemas\/v2\/DeprecationNoticeNotification\.json"/);
});

test('renderDocs escapes every text it takes from the document', () => {
  const doc = structuredClone(buildDoc('https://s.example')) as OpenApiDocument & { info: { summary: string; description: string } };
  const evil = '<script>alert("x")</script> & <img src=//evil.example/x onerror=alert(1)>';
  doc.info.summary = evil;
  doc.info.description = `${evil}\n\nsecond \`<b>\` paragraph`;
  const health = doc.paths['/api/health']!.get!;
  (health as { summary: string }).summary = evil;
  const html = renderDocs(doc);
  assertSelfContained(html, '');
  assert.ok(html.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=//evil.example/x onerror=alert(1)&gt;'));
  assert.ok(html.includes('<p>second <code>&lt;b&gt;</code> paragraph</p>'));
});

for (const basePath of ['', '/s']) {
  test(`GET ${basePath}/docs serves the rendering of the served document, and its stylesheet is served (base path "${basePath}")`, async (t) => {
    const h = await start(t, basePath ? { baseUrl: `http://127.0.0.1:1${basePath}` } : {});
    const r = await h.req(`${basePath}/docs`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(r.headers['content-security-policy'], "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'");
    const doc = JSON.parse((await h.req(`${basePath}/openapi.json`)).body) as OpenApiDocument;
    assert.equal(r.body, renderDocs(doc));
    assertSelfContained(r.body, basePath);
    const stylesheets = [...r.body.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((m) => m[1]!);
    assert.deepEqual(stylesheets, [`${basePath}/static/docs.css`]);
    for (const href of stylesheets) {
      const css = await h.req(href);
      assert.equal(css.status, 200);
      assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
      assert.equal(css.body, readFileSync(new URL('../../static/docs.css', import.meta.url), 'utf8'));
    }
    // Every same-origin link of the page is served (the gate is off here).
    for (const href of urlsOf(r.body).filter((u) => u.startsWith('/'))) {
      assert.equal((await h.req(href)).status, 200, href);
    }
  });
}
