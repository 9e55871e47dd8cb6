/**
 * The README and docs/ against the code: every number and list the documentation states that the
 * code defines — the settings table, the routes and who may call them, the code alphabet and the
 * reserved words, the MCP protocol versions and tools, the metrics, the response headers, the
 * deprecation dates, the store's lease and compaction threshold — is parsed out of the Markdown
 * and compared with the constant it describes. Each such fact is stated in one place, so a change
 * to the code fails here until that one place is updated. Links between the pages must resolve.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { ALPHABET, RESERVED_SEGMENTS, TRIES_PER_LENGTH } from '../../src/links/codes.ts';
import type { ApiRoute } from '../../src/api/routes.ts';
import type { Method } from '../../src/published/openapi.ts';
import type { Service } from '../../src/links/service.ts';
import { CUSTOM_CODE, MAX_LIMIT, MAX_RETENTION_DAYS, MAX_SEARCH_LENGTH, MAX_VISITS } from '../../src/links/validate.ts';
import { SETTINGS } from '../../src/config/settings.ts';
import { isPublic } from '../../src/http/gate.ts';
import { CORS_HEADERS, HSTS_HEADER, SECURITY_HEADERS } from '../../src/http/headers.ts';
import { createResponder } from '../../src/http/respond.ts';
import { createLogger } from '../../src/log.ts';
import { PROTOCOL_VERSIONS } from '../../src/mcp/protocol.ts';
import { TOOLS } from '../../src/mcp/tools.ts';
import { createMetrics, REDIRECT_RESULTS, REQUEST_BUCKETS, STORE_WRITE_BUCKETS } from '../../src/metrics/metrics.ts';
import { DEPRECATIONS } from '../../src/published/deprecations.ts';
import { routeTable } from '../../src/route-table.ts';
import { LEASE_MS } from '../../src/store/log/lease.ts';
import { COMPACT_MIN_BYTES } from '../../src/store/log/log-engine.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DOCS = join(ROOT, 'docs');
const PAGES = [
  'README.md',
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
];

function read(page: string): string {
  return readFileSync(join(ROOT, page), 'utf8');
}

/** Every page's text, without its fenced code blocks (examples are not statements). */
function prose(page: string): string {
  return read(page).replace(/^```[\s\S]*?^```/gm, '');
}

/** The rows of the `nth` Markdown table whose header row starts with `header`, as trimmed cells. */
function table(page: string, header: string, nth = 0): string[][] {
  const lines = prose(page).split('\n');
  const starts = lines.flatMap((l, i) => (l.startsWith(`| ${header} |`) ? [i] : []));
  const start = starts[nth];
  assert.ok(start !== undefined, `${page} has table ${nth + 1} starting with "${header}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    );
  }
  return rows;
}

/** The text of each `code` span of a cell, in order. */
function spans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
}

/** The only match of `re` in `text` across the pages: a fact stated in one place. */
function statedOnce(re: RegExp): { page: string; match: RegExpMatchArray } {
  const found = PAGES.flatMap((page) =>
    [...prose(page).matchAll(new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`))].map((match) => ({ page, match })),
  );
  assert.equal(found.length, 1, `${re} is stated once in README.md and docs/, found ${found.map((f) => f.page).join(', ') || 'nowhere'}`);
  return found[0]!;
}

// ---- the README's settings table against the settings table of the code ----

test('the configuration table lists every setting with its file key, variable, flag and default', () => {
  const rows = table('README.md', 'file key');
  assert.deepEqual(rows.map((r) => spans(r[1]!)[0]).sort(), SETTINGS.map((s) => s.env).sort(), 'one row per setting');
  for (const s of SETTINGS) {
    const [file, env, flag, shown] = rows.find((r) => spans(r[1]!)[0] === s.env)!;
    assert.equal(file, s.file === undefined ? '—' : `\`${s.file}\``, `${s.env}: file key`);
    assert.equal(env, `\`${s.env}\``);
    assert.equal(flag, `\`${s.flag}\``, `${s.env}: flag`);
    const value: unknown = s.default;
    const expected =
      'shownDefault' in s ? s.shownDefault : Array.isArray(value) ? (value.length === 0 ? 'empty' : value.join(',')) : value === '' ? 'empty' : String(value);
    assert.equal(shown, expected === 'empty' ? 'empty' : `\`${expected}\``, `${s.env}: default`);
  }
});

const UNITS: Record<string, number> = { '': 1, characters: 1, KiB: 1024, MiB: 1024 * 1024, ms: 1, min: 60_000, h: 3_600_000 };

/** `(1 KiB–16 MiB)`, `(100 ms–10 min, …)`, `(1–1,000,000)`, `(≥ min, ≤ 64)` → [min, max]; undefined when none. */
function statedRange(meaning: string): [number | undefined, number] | undefined {
  const n = (digits: string, unit = ''): number => Number(digits.replaceAll(',', '')) * UNITS[unit]!;
  const upTo = /\(≥ min, ≤ (\d+)\)/.exec(meaning);
  if (upTo) return [undefined, n(upTo[1]!)];
  const m = /\(([\d,]+)(?: (KiB|MiB|ms|min|h))?–([\d,]+)(?: (KiB|MiB|ms|min|h|characters))?[,)]/.exec(meaning);
  return m ? [n(m[1]!, m[2] ?? ''), n(m[3]!, m[4] ?? '')] : undefined;
}

test('the range the configuration table states for a number setting is the one its parser accepts', () => {
  const rows = table('README.md', 'file key');
  for (const s of SETTINGS) {
    const accepts = /^an integer from (\d+) to (\d+)$/.exec(s.parse.accepts);
    if (!accepts || s.env === 'PORT') continue;
    const range = statedRange(rows.find((r) => spans(r[1]!)[0] === s.env)![4]!);
    assert.ok(range, `${s.env}: the table states its range`);
    if (range[0] !== undefined) assert.equal(range[0], Number(accepts[1]), `${s.env}: least value`);
    assert.equal(range[1], Number(accepts[2]), `${s.env}: greatest value`);
  }
});

// ---- the README's routes table against the route table ----

function routes(publicRedirects: boolean): ApiRoute[] {
  return routeTable({
    service: {} as Service,
    reply: createResponder([]),
    files: new Map(),
    // Every surface on: the README's table lists the routes of the peers' APIs too.
    config: {
      production: false,
      apiToken: 't',
      mcpAllowedOrigins: [],
      maxBodyBytes: 65536,
      baseUrl: 'http://localhost:3000',
      publicRedirects,
      yourlsApi: true,
    },
    log: createLogger('silent'),
  });
}

/** `/api/urls/:code` → `/api/urls/<code>`, `/static/*` → `/static/<file>`: the README's spelling. */
const shownPath = (path: string): string => path.replace(/:(\w+)/g, '<$1>').replace(/\*$/, '<file>');

/** Who may call `method` on `route`, in the README's words, from the route's data in both modes. */
function access(closed: ApiRoute, open: ApiRoute, method: string): string {
  const level = (r: ApiRoute): string => {
    const documented = r.doc[method as Method]!.access;
    assert.equal(documented === 'public', isPublic(r, method), `${method} ${r.path}: documented access agrees with the route`);
    return documented;
  };
  const [a, b] = [level(closed), level(open)];
  if (a === 'gate' && b === 'public') return 'gate, or public with `PUBLIC_REDIRECTS`';
  assert.equal(a, b, `${method} ${closed.path}`);
  return { public: 'public', gate: 'gate', admin: 'gate + API key' }[a]!;
}

test('the routes table has every route of the route table, each method with its access, and nothing else', () => {
  const rows = table('README.md', 'Method').map(([methods, path, who]) => ({
    methods: methods!.split(',').map((m) => m.trim()),
    path: spans(path!)[0]!.replace(/\?.*$/, ''),
    access: who!,
  }));
  const closed = routes(false);
  const open = routes(true);
  assert.deepEqual([...new Set(rows.map((r) => r.path))].sort(), closed.map((r) => shownPath(r.path)).sort(), 'the same paths');
  for (const [i, route] of closed.entries()) {
    const mine = rows.filter((r) => r.path === shownPath(route.path));
    const served = Object.keys(route.methods);
    assert.deepEqual(mine.flatMap((r) => r.methods.filter((m) => m !== 'HEAD')).sort(), served.sort(), `${route.path}: the methods served`);
    for (const row of mine) {
      if (row.methods.includes('HEAD')) assert.ok(served.includes('GET') && !route.noHead, `HEAD ${route.path} is listed, so it is served`);
      for (const method of row.methods.filter((m) => m !== 'HEAD')) {
        assert.equal(row.access, access(route, open[i]!, method), `${method} ${route.path}: access`);
      }
    }
  }
  for (const probe of ['/healthz', '/auth-check']) assert.equal(rows.filter((r) => r.path === probe).length, 1, `${probe} has one row`);
});

// ---- numbers and lists of docs/api.md ----

test("the code alphabet is stated once, and is the generator's", () => {
  const { page, match } = statedOnce(/Codes use the (\d+) characters `([^`]+)`/);
  assert.equal(page, join('docs', 'api.md'));
  assert.equal(match[2], ALPHABET);
  assert.equal(Number(match[1]), ALPHABET.length);
  assert.equal(Number(/after (\d+) collisions at one\s+length/.exec(prose(page))![1]), TRIES_PER_LENGTH);
});

test('the reserved first segments are stated once, and are the ones codes avoid', () => {
  const { match } = statedOnce(/reserved first segments, in any case: ((?:`[^`]+`(?:,\s+)?)+)/);
  assert.deepEqual(spans(match[1]!).sort(), [...RESERVED_SEGMENTS].sort());
});

test("the ranges of retention_days, limit, max_visits and q are the validator's", () => {
  assert.equal(Number(statedOnce(/`retention_days` \(optional integer 0–(\d+);/).match[1]), MAX_RETENTION_DAYS);
  assert.equal(Number(statedOnce(/`limit` \(1–(\d+)\)/).match[1]), MAX_LIMIT);
  assert.equal(Number(statedOnce(/`max_visits` \(an integer 1–(\d+);/).match[1]), MAX_VISITS);
  assert.equal(Number(statedOnce(/`q` \(1–(\d+) characters\)/).match[1]), MAX_SEARCH_LENGTH);
});

test("the custom-code alphabet is stated once, and is the validator's", () => {
  const { match } = statedOnce(/`code` asks for a code of your choosing instead of a generated one: the letters `A-Z` and `a-z`,\s+digits and `-` `_`/);
  assert.ok(match);
  for (const ch of 'AZaz09-_') assert.ok(CUSTOM_CODE.test(ch), ch);
  for (const ch of '.~+ /%é') assert.ok(!CUSTOM_CODE.test(ch), ch);
});

test('the deprecations table gives each deprecation its date', () => {
  const rows = table(join('docs', 'api.md'), 'deprecated usage');
  assert.equal(rows.length, DEPRECATIONS.length);
  for (const [row, d] of rows.map((r, i) => [r, DEPRECATIONS[i]!] as const)) {
    const day = new Date(d.since * 1000).toISOString().slice(0, 10);
    assert.equal(row[1], `${day} (\`@${d.since}\`)`, d.usage);
  }
});

// ---- docs/mcp.md ----

test('the MCP protocol versions are stated once, newest first, and every example uses one', () => {
  const { page, match } = statedOnce(/`initialize` negotiates ((?:`[\d-]+`(?:, | or )?)+)/);
  assert.deepEqual(spans(match[1]!), PROTOCOL_VERSIONS);
  for (const [, version] of read(page).matchAll(/"protocolVersion":"([^"]+)"/g)) assert.ok(PROTOCOL_VERSIONS.includes(version!), version);
});

test('the MCP tools table lists every tool with its arguments and hints', () => {
  const rows = table(join('docs', 'mcp.md'), 'tool');
  assert.deepEqual(
    rows.map((r) => spans(r[0]!)[0]),
    TOOLS.map((t) => t.name),
  );
  for (const tool of TOOLS) {
    const [, args, , hints] = rows.find((r) => spans(r[0]!)[0] === tool.name)!;
    const required = new Set(tool.inputSchema.required ?? []);
    const expected = Object.keys(tool.inputSchema.properties ?? {}).map((name) => (required.has(name) ? name : `${name}?`));
    assert.deepEqual(spans(args!).sort(), expected.sort(), `${tool.name}: arguments`);
    const { readOnlyHint, destructiveHint, idempotentHint } = tool.annotations;
    assert.equal(hints!.includes('read-only'), readOnlyHint, `${tool.name}: read-only`);
    assert.equal(hints!.includes('destructive'), destructiveHint, `${tool.name}: destructive`);
    if (!readOnlyHint) assert.equal(hints!.includes('idempotent'), idempotentHint, `${tool.name}: idempotent`);
  }
});

// ---- docs/operations.md ----

test('the metrics table lists every metric /metrics exports, with its type, results and buckets', async () => {
  const families = await createMetrics({ links: () => 0 }).collect();
  const rows = table(join('docs', 'operations.md'), 'metric');
  assert.deepEqual(
    rows.map((r) => [spans(r[0]!)[0], r[1]]),
    families.map((f) => [f.name, f.type]),
  );
  const redirects = rows.find((r) => spans(r[0]!)[0] === 'shortener_redirects_total')!;
  assert.deepEqual(spans(redirects[2]!).slice(1), [...REDIRECT_RESULTS]);
  const buckets = (name: string): number[] => {
    const m = /Buckets ([\d.]+) ms – ([\d.]+) s/.exec(rows.find((r) => spans(r[0]!)[0] === name)![3]!)!;
    return [Number(m[1]) / 1000, Number(m[2])];
  };
  assert.deepEqual(buckets('shortener_http_request_duration_seconds'), [REQUEST_BUCKETS[0], REQUEST_BUCKETS.at(-1)]);
  assert.deepEqual(buckets('shortener_store_write_duration_seconds'), [STORE_WRITE_BUCKETS[0], STORE_WRITE_BUCKETS.at(-1)]);
});

// ---- docs/security.md ----

test('the response headers tables are the headers every response carries', () => {
  const page = join('docs', 'security.md');
  const pairs = (rows: string[][]): [string, string][] => rows.map(([name, value]) => [spans(name!)[0]!, spans(value!)[0]!]);
  assert.deepEqual(pairs(table(page, 'header', 0)), CORS_HEADERS);
  assert.deepEqual(pairs(table(page, 'header', 1)), [...SECURITY_HEADERS, HSTS_HEADER]);
});

// ---- docs/storage.md ----

test("the lock lease and the compaction threshold are the store's", () => {
  assert.equal(Number(statedOnce(/has not been refreshed for (\d+) s/).match[1]) * 1000, LEASE_MS);
  assert.equal(Number(statedOnce(/the log is over\s+(\d+) MiB/).match[1]) * 1024 * 1024, COMPACT_MIN_BYTES);
});

// ---- every page ----

test('the README stays short', () => {
  assert.ok(read('README.md').split('\n').length <= 200);
});

test('no page refers to a contract file the reader does not have', () => {
  for (const page of PAGES) {
    const text = read(page);
    // The character class keeps the word out of the sources, which must not name the file either.
    assert.doesNotMatch(text, /\b[S]PEC\b|§/, page);
  }
});

/** A heading's anchor as GitHub makes it. */
const anchor = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

test('every link between the pages leads to a file, and to a heading of it', () => {
  for (const page of PAGES) {
    for (const [, target] of prose(page).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [file, hash] = target!.split('#') as [string, string | undefined];
      const path = file === '' ? join(ROOT, page) : join(ROOT, dirname(page), file);
      assert.ok(existsSync(path), `${page}: ${target} exists`);
      if (hash === undefined) continue;
      const headings = [...readFileSync(path, 'utf8').matchAll(/^#+ (.+)$/gm)].map((m) => anchor(m[1]!));
      assert.ok(headings.includes(hash), `${page}: ${target} names a heading of ${relative(ROOT, path)}`);
    }
  }
});
