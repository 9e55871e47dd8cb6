/**
 * Writing responses. Every response starts from the same precomputed header block (CORS and
 * security headers, docs/api.md) and goes out through one `writeHead` with a flat header array:
 * no header object is built per request.
 */
import type { ServerResponse } from 'node:http';
import { pace, type Piece } from './pacer.ts';

export const JSON_TYPE = 'application/json';
export const TEXT_TYPE = 'text/plain; charset=utf-8';
export const HTML_TYPE = 'text/html; charset=utf-8';

export interface Responder {
  /** A body-less response; `Content-Length: 0` except on 204 and 304, which must not carry one. */
  empty(res: ServerResponse, status: number, extra?: readonly string[]): void;
  json(res: ServerResponse, status: number, value: unknown, extra?: readonly string[]): void;
  /** The redirect of a short link: `302`, `Location`, `Cache-Control: private, no-store`, no body. */
  found(res: ServerResponse, location: string): void;
  send(res: ServerResponse, status: number, type: string, body: string | Buffer, extra?: readonly string[]): void;
  /**
   * A body made of `pieces`, written by the pacer (pacer.ts): a few pieces per event-loop turn at
   * most, the next only once the socket drained when it had to, so a long body never holds the loop
   * for long, nor piles up in memory for a slow client. Chunked (no Content-Length). Resolves when
   * done, or when the client went away.
   */
  stream(res: ServerResponse, status: number, type: string, pieces: Iterable<Piece>, extra?: readonly string[]): Promise<void>;
}

export function createResponder(base: readonly string[]): Responder {
  // One header array for every redirect, its Location slot filled in per response: writeHead reads
  // it synchronously and keeps nothing, so no array is built per redirect.
  const redirect = [...base, 'Location', '', 'Cache-Control', 'private, no-store', 'Content-Length', '0'];
  const locationAt = base.length + 1;
  function send(res: ServerResponse, status: number, type: string, body: string | Buffer, extra: readonly string[] = []): void {
    const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    res.writeHead(status, [...base, ...extra, 'Content-Type', type, 'Content-Length', String(length)]);
    // The head and the body in one write. `end(body)` would cork the socket, queue them with an
    // empty chunk after them, and send both with writev: a sixth more for the 404 page a scanner
    // gets hundreds of times a second (docs/performance.md, several domains). `write` corks the
    // socket until the next tick; that cork, and only it, is undone here, so head and body go out
    // at once and `end` has nothing left to send.
    const socket = res.socket;
    const corked = socket?.writableCorked ?? 0;
    res.write(body);
    if (socket && socket.writableCorked > corked) socket.uncork();
    res.end();
  }
  return {
    empty(res, status, extra = []) {
      res.writeHead(status, status === 204 || status === 304 ? [...base, ...extra] : [...base, ...extra, 'Content-Length', '0']);
      res.end();
    },
    json(res, status, value, extra) {
      send(res, status, JSON_TYPE, JSON.stringify(value), extra);
    },
    found(res, location) {
      redirect[locationAt] = location;
      res.writeHead(302, redirect);
      res.end();
    },
    send,
    stream(res, status, type, pieces, extra = []) {
      res.writeHead(status, [...base, ...extra, 'Content-Type', type]);
      return pace(res, pieces[Symbol.iterator]());
    },
  };
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

export interface PageOptions {
  /** The status, shown above the title (`404`). */
  status?: number;
  /** Prefix of the service's root relative to the page (`''`, or `'../'` under a trailing slash). */
  root?: string;
  /** Link to the home page (the UI): only when it is served. */
  home?: boolean;
  /** A link to go on with (the link preview page's "Continue"), relative to the page. */
  action?: { readonly href: string; readonly text: string };
  /** HTML of the page's own, after the message (a protected link's form), already escaped. */
  body?: string;
  /** The UI's stylesheets the page needs besides `style.css` (`controls.css` for a form's field). */
  stylesheets?: readonly string[];
}

/**
 * A small HTML page in the UI's look: no script and no inline style (the CSP allows neither), just
 * the UI's stylesheet, which is public even behind the gate. Its URLs are relative to `root`, so
 * the page works under any base path.
 */
export function htmlPage(title: string, message: string, { status, root = '', home = false, action, body = '', stylesheets = [] }: PageOptions = {}): string {
  const r = escapeHtml(root);
  const extra = stylesheets.map((name) => `<link rel="stylesheet" href="${r}static/${escapeHtml(name)}">\n`).join('');
  return (
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    '<meta name="color-scheme" content="light dark">\n' +
    `<title>${escapeHtml(title)}</title>\n` +
    `<link rel="icon" href="${r}static/favicon.svg" type="image/svg+xml">\n` +
    `<link rel="stylesheet" href="${r}static/style.css">\n` +
    extra +
    '</head>\n<body class="link-page">\n<main>\n<div class="card">\n' +
    (status === undefined ? '' : `<p class="status-code">Error ${status}</p>\n`) +
    `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>\n` +
    body +
    (action === undefined ? '' : `<p><a href="${escapeHtml(action.href)}">${escapeHtml(action.text)}</a></p>\n`) +
    (home ? `<p><a href="${r || './'}">Go to the home page</a></p>\n` : '') +
    '</div>\n</main>\n</body>\n</html>\n'
  );
}
