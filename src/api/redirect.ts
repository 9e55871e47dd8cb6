/**
 * The answer of a short link (docs/api.md): the redirect, or a small page saying why there is none,
 * in the UI's look (docs/ui.md). Shared by the `/:code` route and the redirect fast path in
 * `dispatch.ts`.
 */
import type { ServerResponse } from 'node:http';
import { HTML_TYPE, htmlPage, type Responder } from '../http/respond.ts';
import type { Visit } from '../links/service.ts';

const NO_STORE = ['Cache-Control', 'private, no-store'];

interface LinkPages {
  missing: string;
  expired: string;
  limitReached: string;
}

function linkPages(home: boolean, root: string): LinkPages {
  const options = { home, root };
  return {
    missing: htmlPage('Link not found', 'There is no short link at this address. Check it for typos.', { ...options, status: 404 }),
    expired: htmlPage('This link has expired', 'The owner of this short link gave it a limited lifetime, and it has passed.', { ...options, status: 410 }),
    limitReached: htmlPage(
      'This link has reached its visit limit',
      'The owner of this short link let it be opened a limited number of times, and it has been.',
      { ...options, status: 410 },
    ),
  };
}

// Built once: with or without the link home, for `/<code>` and for `/<code>/` (one level deeper,
// so the page's relative URLs start with `../`).
const PAGES = {
  home: { plain: linkPages(true, ''), slash: linkPages(true, '../') },
  bare: { plain: linkPages(false, ''), slash: linkPages(false, '../') },
};

/** The pages for this request: relative URLs must resolve from where the browser is. */
function pagesFor(res: ServerResponse, home: boolean): LinkPages {
  const url = (res as Partial<ServerResponse>).req?.url ?? '';
  const path = url.split('?', 1)[0]!;
  const set = home ? PAGES.home : PAGES.bare;
  return path.endsWith('/') ? set.slash : set.plain;
}

/**
 * The answer to `GET`/`HEAD /<code>` once the store decided. `home`: the UI is served (not
 * `PRODUCTION=true`), so the pages link to it.
 */
export function answerVisit(reply: Responder, res: ServerResponse, hit: Visit, home = false): void {
  switch (hit.kind) {
    case 'found':
      return reply.found(res, hit.url);
    case 'expired':
      return reply.send(res, 410, HTML_TYPE, pagesFor(res, home).expired, NO_STORE);
    case 'limit_reached':
      return reply.send(res, 410, HTML_TYPE, pagesFor(res, home).limitReached, NO_STORE);
    case 'missing':
      return reply.send(res, 404, HTML_TYPE, pagesFor(res, home).missing, NO_STORE);
  }
}
