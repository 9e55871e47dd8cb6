/**
 * The UI stays small (docs/ui.md): the sizes it states for the whole page, raw and with gzip, are
 * the files' own within a tenth, and the stats' own files fit in what it says the stats add. What
 * the page loads is read from `index.html` and the modules' imports, so a new file counts as soon
 * as the page uses it; every module is named in `index.html` too, so the browser asks for all of
 * them at once instead of one level of imports at a time.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';

const STATIC = new URL('../../static/', import.meta.url);
const read = (name: string): string => readFileSync(new URL(name, STATIC), 'utf8');

/** The files of `static/` that `index.html` names (`href="static/…"`, `src="static/…"`), by `rel` or `script`. */
function named(html: string): { rel: string; file: string }[] {
  return [...html.matchAll(/<(link|script)\b([^>]*)>/g)].flatMap(([, tag, attributes]) => {
    const file = /\s(?:href|src)="static\/([^"]+)"/.exec(attributes ?? '')?.[1];
    const rel = tag === 'script' ? 'script' : (/\srel="([^"]+)"/.exec(attributes ?? '')?.[1] ?? '');
    return file ? [{ rel, file }] : [];
  });
}

/** Every module `entry` imports, directly or not, itself included; `skip` is not followed. */
function modules(entry: string, skip = ''): Set<string> {
  const seen = new Set<string>();
  const visit = (name: string): void => {
    if (seen.has(name) || name === skip) return;
    seen.add(name);
    for (const [, dep] of read(name).matchAll(/^import [^;]*? from '\.\/([\w.-]+\.js)';$/gm)) visit(dep!);
  };
  visit(entry);
  return seen;
}

function measure(files: Iterable<string>): { raw: number; gzip: number } {
  let raw = 0;
  let gzip = 0;
  for (const name of files) {
    const body = readFileSync(new URL(name, STATIC));
    raw += body.length;
    gzip += gzipSync(body, { level: 9 }).length;
  }
  return { raw: raw / 1000, gzip: gzip / 1000 };
}

const html = read('index.html');
const links = named(html);
const entry = links.filter((l) => l.rel === 'script').map((l) => l.file);
const all = modules('app.js');
/** What only the stats use: the modules the page would not load without `stats.js`, and their stylesheet. */
const statsFiles = [...all].filter((name) => !modules('app.js', 'stats.js').has(name)).concat('stats.css');

test('index.html starts app.js and names every module it imports, and no other, to be fetched at once', () => {
  assert.deepEqual(entry, ['app.js']);
  const preloaded = links.filter((l) => l.rel === 'modulepreload').map((l) => l.file);
  assert.deepEqual(new Set(preloaded), new Set([...all].filter((name) => name !== 'app.js')));
  assert.equal(preloaded.length, all.size - 1, 'each module once');
});

test("docs/ui.md's sizes are the page's, within a tenth; the stats' own files fit in what it says the stats add", () => {
  const doc = readFileSync(new URL('../../docs/ui.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  const m = /The whole page is about (\d+) KB \(about (\d+) KB with gzip[^)]*\); the stats add about (\d+) KB of it \(about (\d+) KB with gzip\)/.exec(doc);
  assert.ok(m, 'docs/ui.md states the sizes');
  const [page, pageGzip, stats, statsGzip] = m.slice(1).map(Number) as [number, number, number, number];
  const pageFiles = new Set(['index.html', ...links.map((l) => l.file), ...all]);
  assert.ok(pageFiles.has('style.css') && pageFiles.has('favicon.svg') && pageFiles.has('charts.js'), [...pageFiles].join(' '));
  const whole = measure(pageFiles);
  assert.ok(Math.abs(whole.raw - page) <= page / 10, `the page is ${whole.raw} KB, the docs say about ${page}`);
  assert.ok(Math.abs(whole.gzip - pageGzip) <= pageGzip / 10, `the page is ${whole.gzip} KB with gzip, the docs say about ${pageGzip}`);
  assert.ok(statsFiles.includes('stats.js') && statsFiles.includes('charts.js') && !statsFiles.includes('api.js'), statsFiles.join(' '));
  const own = measure(statsFiles);
  assert.ok(own.raw <= stats && own.gzip <= statsGzip, `${statsFiles.join(', ')}: ${own.raw} KB, ${own.gzip} KB with gzip`);
});
