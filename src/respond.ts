/**
 * Writing responses. Every response starts from the same precomputed header block (CORS and
 * security headers, SPEC §3.7) and goes out through one `writeHead` with a flat header array:
 * no header object is built per request.
 */
import type { ServerResponse } from 'node:http';

export const JSON_TYPE = 'application/json';
export const TEXT_TYPE = 'text/plain; charset=utf-8';
export const HTML_TYPE = 'text/html; charset=utf-8';

export interface Responder {
  /** A body-less response; `Content-Length: 0` except on 204 and 304, which must not carry one. */
  empty(res: ServerResponse, status: number, extra?: readonly string[]): void;
  json(res: ServerResponse, status: number, value: unknown, extra?: readonly string[]): void;
  send(res: ServerResponse, status: number, type: string, body: string | Buffer, extra?: readonly string[]): void;
}

export function createResponder(base: readonly string[]): Responder {
  function send(res: ServerResponse, status: number, type: string, body: string | Buffer, extra: readonly string[] = []): void {
    const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    res.writeHead(status, [...base, ...extra, 'Content-Type', type, 'Content-Length', String(length)]);
    res.end(body);
  }
  return {
    empty(res, status, extra = []) {
      res.writeHead(status, status === 204 || status === 304 ? [...base, ...extra] : [...base, ...extra, 'Content-Length', '0']);
      res.end();
    },
    json(res, status, value, extra) {
      send(res, status, JSON_TYPE, JSON.stringify(value), extra);
    },
    send,
  };
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A small self-contained HTML page (no script, no style: it passes the CSP as it is). */
export function htmlPage(title: string, message: string): string {
  return (
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    `<title>${escapeHtml(title)}</title>\n</head>\n<body>\n<main>\n<h1>${escapeHtml(title)}</h1>\n` +
    `<p>${escapeHtml(message)}</p>\n</main>\n</body>\n</html>\n`
  );
}
