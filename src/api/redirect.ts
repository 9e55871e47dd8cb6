/**
 * The answer of a short link (docs/api.md): the redirect, or a small page saying why there is none,
 * in the UI's look (docs/ui.md). Shared by the `/:code` route and the redirect fast path in
 * `dispatch.ts`.
 */
import type { ServerResponse } from 'node:http';
import { HTML_TYPE, htmlPage, type Responder } from '../http/respond.ts';
import type { Elsewhere } from '../links/domain-redirects.ts';
import type { PasswordAnswer } from '../links/routed-visit.ts';
import type { MaybePromise, OrphanType, Visit } from '../links/service.ts';
import { passwordPage } from './password-page.ts';

const NO_STORE = ['Cache-Control', 'private, no-store'];

interface LinkPages {
  missing: string;
  expired: string;
  limitReached: string;
  preview: string;
}

/**
 * The page a link-preview fetcher gets for a live link with a visit limit (docs/api.md, link
 * previews): it names no target, so a chat's preview shows this instead, and opening the link uses
 * no visit. "Continue" is `?go` relative to the page, so it is `<code>?go` (or `<code>/?go`) under
 * any base path, and the page is the same for every link: a `?go` request is never a preview.
 */
const PREVIEW_TITLE = 'A short link';
const PREVIEW_MESSAGE = 'This link can be opened a limited number of times, so it is not opened for a preview. Continue to open it.';

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
    preview: htmlPage(PREVIEW_TITLE, PREVIEW_MESSAGE, { ...options, action: { href: '?go', text: 'Continue' } }),
  };
}

// Built once: with or without the link home, for `/<code>` and for `/<code>/` (one level deeper,
// so the page's relative URLs start with `../`).
const PAGES = {
  home: { plain: linkPages(true, ''), slash: linkPages(true, '../') },
  bare: { plain: linkPages(false, ''), slash: linkPages(false, '../') },
};

/** Where the service's root is from this request's page: relative URLs must resolve from where the browser is. */
function rootOf(res: ServerResponse): '' | '../' {
  const url = (res as Partial<ServerResponse>).req?.url ?? '';
  return url.split('?', 1)[0]!.endsWith('/') ? '../' : '';
}

/** The pages for this request. */
function pagesFor(res: ServerResponse, home: boolean): LinkPages {
  const set = home ? PAGES.home : PAGES.bare;
  return rootOf(res) === '' ? set.plain : set.slash;
}

/** The route of a short link, as the route table and the metrics name it. */
export const CODE_ROUTE = '/:code';

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
    case 'preview':
      return reply.send(res, 200, HTML_TYPE, pagesFor(res, home).preview, NO_STORE);
    case 'fallback':
      return reply.found(res, hit.url);
    case 'password':
      return answerPassword(reply, res, hit, home);
  }
}

/** The form of a protected link: asked (`200`), a wrong password (`401`), or too many (`429` with `Retry-After`). */
function answerPassword(reply: Responder, res: ServerResponse, hit: PasswordAnswer, home: boolean): void {
  const root = rootOf(res);
  if (hit.status === 429) {
    const page = passwordPage({ home, root, retryAfter: hit.retryAfter });
    return reply.send(res, 429, HTML_TYPE, page, [...NO_STORE, 'Retry-After', String(hit.retryAfter)]);
  }
  return reply.send(res, hit.status, HTML_TYPE, passwordPage({ home, root, wrong: hit.status === 401 }), NO_STORE);
}

/** The page answers a domain may send elsewhere instead (docs/api.md, domains), and the orphan visit each is. */
const ELSEWHERE: Partial<Record<Visit['kind'], Elsewhere>> = { missing: 'notFound', expired: 'expired', limit_reached: 'expired' };
const ORPHAN: Partial<Record<Visit['kind'], OrphanType>> = { missing: 'invalid_short_url', expired: 'expired', limit_reached: 'expired' };

/**
 * `answerVisit` on a domain: an unknown code, or an expired or used-up link, goes where the domain
 * sends it (`elsewhere`, a `302` and never a visit) when it sends it anywhere; else the page. Each
 * of those is an orphan visit, told to `orphan` (a GET's: a HEAD is none).
 */
export function answerVisitOn(
  reply: Responder,
  res: ServerResponse,
  hit: Visit,
  home: boolean,
  elsewhere: (what: Elsewhere) => MaybePromise<string | null>,
  orphan?: (type: OrphanType) => void,
): void | Promise<void> {
  const what = ELSEWHERE[hit.kind];
  if (what === undefined) return answerVisit(reply, res, hit, home);
  orphan?.(ORPHAN[hit.kind]!);
  const to = elsewhere(what);
  const answer = (url: string | null): void => (url === null ? answerVisit(reply, res, hit, home) : reply.found(res, url));
  if (to instanceof Promise) return to.then(answer);
  answer(to);
}
