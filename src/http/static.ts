/**
 * The embedded frontend: files under `static/` are read once at start-up and served from memory
 * with a strong ETag, so a revalidation costs a string compare and a 304.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT } from '../package-root.ts';

export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

export interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

/** The `static/` folder of the package, beside `src/` and `dist/`. */
export const STATIC_DIR = fileURLToPath(new URL('static/', PACKAGE_ROOT));

/** A file served from memory, with its strong ETag. */
export function staticFile(body: Buffer, type: string): StaticFile {
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/**
 * `files` with the UI page naming this instance's domains (docs/ui.md), when it has several: a
 * `<meta name="domains">` of the hosts, the default one first, that the shorten form's domain
 * picker reads. The hosts are public names (each is the address of short links), so the page,
 * which anyone may load, may name them.
 */
export function withDomains(files: ReadonlyMap<string, StaticFile>, hosts: readonly string[]): ReadonlyMap<string, StaticFile> {
  const page = files.get('index.html');
  if (page === undefined || hosts.length < 2) return files;
  const meta = `<meta name="domains" content="${hosts.join(' ')}">\n</head>`;
  const html = page.body.toString('utf8').replace('</head>', meta);
  return new Map([...files, ['index.html', staticFile(Buffer.from(html, 'utf8'), page.type)]]);
}

/** Every file below `dir` by its relative path (`app.js`, `img/logo.svg`). Hidden files are skipped. */
export function loadStatic(dir: string = STATIC_DIR): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const walk = (rel: string): void => {
    let names: string[];
    try {
      names = readdirSync(join(dir, rel));
    } catch {
      return; // no static folder: the UI routes answer 404
    }
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const path = rel ? `${rel}/${name}` : name;
      if (statSync(join(dir, path)).isDirectory()) {
        walk(path);
        continue;
      }
      files.set(path, staticFile(readFileSync(join(dir, path)), CONTENT_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream'));
    }
  };
  walk('');
  return files;
}
