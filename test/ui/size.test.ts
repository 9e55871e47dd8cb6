/**
 * The UI stays small (docs/ui.md): the sizes it states for the whole page, raw and with gzip, are
 * the files' own within a tenth, and the two stats modules alone fit in what it says the stats add.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';

const STATIC = new URL('../../static/', import.meta.url);
/** What `GET /` loads: the page, its modules, its stylesheet, its icon. */
const PAGE = ['index.html', 'app.js', 'api.js', 'stats.js', 'charts.js', 'style.css', 'favicon.svg'];
const STATS = ['stats.js', 'charts.js'];

function measure(files: string[]): { raw: number; gzip: number } {
  let raw = 0;
  let gzip = 0;
  for (const name of files) {
    const body = readFileSync(new URL(name, STATIC));
    raw += body.length;
    gzip += gzipSync(body, { level: 9 }).length;
  }
  return { raw: raw / 1000, gzip: gzip / 1000 };
}

test("docs/ui.md's sizes are the page's, within a tenth; the stats modules fit in what it says the stats add", () => {
  const doc = readFileSync(new URL('../../docs/ui.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  const m = /The whole page is about (\d+) KB \(about (\d+) KB with gzip\); the stats add about (\d+) KB of it \(about (\d+) KB with gzip\)/.exec(doc);
  assert.ok(m, 'docs/ui.md states the sizes');
  const [page, pageGzip, stats, statsGzip] = m.slice(1).map(Number) as [number, number, number, number];
  const whole = measure(PAGE);
  assert.ok(Math.abs(whole.raw - page) <= page / 10, `the page is ${whole.raw} KB, the docs say about ${page}`);
  assert.ok(Math.abs(whole.gzip - pageGzip) <= pageGzip / 10, `the page is ${whole.gzip} KB with gzip, the docs say about ${pageGzip}`);
  const modules = measure(STATS);
  assert.ok(modules.raw <= stats && modules.gzip <= statsGzip, `stats.js and charts.js: ${modules.raw} KB, ${modules.gzip} KB with gzip`);
});
