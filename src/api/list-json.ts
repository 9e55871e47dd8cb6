/**
 * The body of `GET /api/urls`, `{"count":N,"urls":[…]}`, built in pieces bounded by size for the
 * pacer (`http/pacer.ts`): listing 100k links never builds 21 MB of JSON in one turn.
 */
import type { ServerResponse } from 'node:http';
import type { Piece } from '../http/pacer.ts';
import { JSON_TYPE, type Responder } from '../http/respond.ts';
import type { UrlListing, UrlRecord } from '../links/record.ts';
import type { MaybePromise } from '../links/service.ts';

/**
 * Characters (UTF-16 units) per piece of a streamed list. A piece is bounded by size, not by a
 * number of records: a thousand records of 64 KiB URLs would be 64 MB, built in one turn. 64 Ki
 * characters take under a millisecond to build and stay a young-generation string, which the
 * garbage collector frees cheaply. URLs and codes are ASCII, but a title or a tag may hold any
 * Unicode, which `JSON.stringify` leaves as it is: up to 3 bytes of UTF-8 per unit, so a piece is
 * at most 192 KiB on the wire. Nothing counts bytes from characters: a whole body's Content-Length
 * is its UTF-8 length (`Responder.send`), a streamed one is chunked, and pieces end between
 * records, never inside a character.
 */
export const LIST_PIECE_CHARS = 64 * 1024;
/** Records read from the page at a time while building pieces. */
const LIST_STEP = 64;

/**
 * `{"count":N,"urls":[…]}` in pieces of about `pieceChars` (at most one record more): together
 * the same bytes as `JSON.stringify` of the whole list. A page whose slices are promises (a
 * database) gives a promise for each slice's records, in order.
 */
export function listJson(page: UrlListing, pieceChars?: number): Generator<string, void, undefined>;
export function listJson(page: UrlListing<MaybePromise<UrlRecord[]>>, pieceChars?: number): Generator<Piece, void, undefined>;
export function* listJson(page: UrlListing<MaybePromise<UrlRecord[]>>, pieceChars = LIST_PIECE_CHARS): Generator<Piece, void, undefined> {
  let piece = `{"count":${page.count},"urls":[`;
  let separator = '';
  for (let i = 0; i < page.count; i += LIST_STEP) {
    const records = page.slice(i, i + LIST_STEP);
    if (records instanceof Promise) {
      // What is built goes first; then the slice, one piece of at most LIST_STEP records.
      if (piece !== '') yield piece;
      piece = '';
      const lead = separator;
      yield records.then((rs) => lead + rs.map((r) => JSON.stringify(r)).join(','));
      separator = ',';
      continue;
    }
    for (const record of records) {
      piece += separator + JSON.stringify(record);
      separator = ',';
      if (piece.length >= pieceChars) {
        yield piece;
        piece = '';
      }
    }
  }
  yield `${piece}]}`;
}

/**
 * Sends a page of the list. One that fits in one piece goes out whole, with a Content-Length; a
 * longer one piece by piece, a few per event-loop turn (see pacer.ts), so that listing 100k links
 * never stalls the loop. Resolves once sent; the caller releases the page.
 */
export async function sendList(reply: Responder, res: ServerResponse, page: UrlListing<MaybePromise<UrlRecord[]>>, headers: readonly string[]): Promise<void> {
  const pieces = listJson(page);
  const first = pieces.next();
  const second = pieces.next();
  if (first.done || second.done) {
    const whole = first.value ?? '';
    return reply.send(res, 200, JSON_TYPE, typeof whole === 'string' ? whole : await whole, headers);
  }
  // Pulled before the pacer takes them: a failed slice must reach it, not go unhandled meanwhile.
  for (const early of [first.value, second.value]) if (typeof early !== 'string') early.catch(() => undefined);
  await reply.stream(res, 200, JSON_TYPE, prepend([first.value, second.value], pieces), headers);
}

/** `seen`, then what is left of `rest`. */
function* prepend<T>(seen: readonly T[], rest: Iterator<T>): Generator<T> {
  yield* seen;
  for (let next = rest.next(); !next.done; next = rest.next()) yield next.value;
}
