/**
 * The answer of a short link (docs/api.md): the redirect, or a small page saying why there is none.
 * Shared by the `/:code` route and the redirect fast path in `dispatch.ts`.
 */
import type { ServerResponse } from 'node:http';
import { HTML_TYPE, htmlPage, type Responder } from '../http/respond.ts';
import type { Visit } from './service.ts';

const NOT_FOUND_PAGE = htmlPage('Link not found', 'There is no short link at this address. Check it for typos.');
const EXPIRED_PAGE = htmlPage('This link has expired', 'The owner of this short link gave it a limited lifetime, and it has passed.');
const LIMIT_PAGE = htmlPage('This link has reached its visit limit', 'The owner of this short link let it be opened a limited number of times, and it has been.');
const NO_STORE = ['Cache-Control', 'private, no-store'];

/** The answer to `GET`/`HEAD /<code>` once the store decided. */
export function answerVisit(reply: Responder, res: ServerResponse, hit: Visit): void {
  switch (hit.kind) {
    case 'found':
      return reply.found(res, hit.url);
    case 'expired':
      return reply.send(res, 410, HTML_TYPE, EXPIRED_PAGE, NO_STORE);
    case 'limit_reached':
      return reply.send(res, 410, HTML_TYPE, LIMIT_PAGE, NO_STORE);
    case 'missing':
      return reply.send(res, 404, HTML_TYPE, NOT_FOUND_PAGE, NO_STORE);
  }
}

