/**
 * The shortening operations, independent of HTTP: the REST routes and the MCP tools call them.
 * One implementation of each operation, over any `LinkStore`. An operation that can fail returns a
 * typed outcome, `{ ok: true, … }` or a `Failure`; the REST routes map failures to statuses in one
 * table (`outcomes.ts`), the MCP tools to `isError` results. Only bugs are thrown.
 */
import { candidateCodes, isCodeShaped, isReserved, RESERVED_SEGMENTS } from './codes.ts';
import { HttpError } from '../errors.ts';
import { digestSecret, matchesSecret } from '../secrets.ts';
import type { Logger } from '../log.ts';
import {
  labelsOf,
  mapMaybe,
  StoreUnavailableError,
  type Labels,
  type LinkChanges,
  type LinkRecord,
  type LinkStore,
  type MaybePromise,
  type VisitDecision,
} from '../store/link-store.ts';
import { recordView, type UrlListing, type UrlRecord } from './record.ts';
import {
  normalTag,
  parseCustomCode,
  parseMaxVisits,
  parseRetention,
  parseRetentionChange,
  parseTags,
  parseTitle,
  unstorableText,
  validateUrl,
  type Paging,
} from './validate.ts';
import { createVisitOperations, type VisitTracking } from './visits.ts';
import type { CreateLimiter } from './create-limit.ts';
import { isPreviewFetcher } from '../visits/preview-fetchers.ts';
import type { Recorder, VisitRequest } from '../visits/recorder.ts';
import type { VisitEventSource } from '../visits/event.ts';

export type { VisitRequest } from '../visits/recorder.ts';

/** The input was refused; `detail` tells the sender why (a 400). */
export type Invalid = { ok: false; error: 'invalid'; detail: string };
/** No live link (unknown, expired or deleted): a 404. */
export type NotFound = { ok: false; error: 'not_found' };
/** Nothing was changed and a retry may succeed: storage not writable, code space exhausted (a 503). */
export type Unavailable = { ok: false; error: 'unavailable'; detail: string };
/** The custom code asked for is held by a live link (a 409). */
export type Conflict = { ok: false; error: 'conflict'; detail: string };
/**
 * The client has used up its creates of the window (`create_rate_limit`, a 429): nothing was
 * created; `retryAfter` whole seconds from now it may create again.
 */
export type RateLimited = { ok: false; error: 'rate_limited'; detail: string; retryAfter: number };
export type Failure = Invalid | NotFound | Unavailable | Conflict | RateLimited;

export type Found = { ok: true; record: UrlRecord };
export type ShortenOutcome = Found | Invalid | Unavailable | Conflict | RateLimited;
export type GetOutcome = Found | NotFound;
export type LookupOutcome = Found | Invalid | NotFound;
export type RemoveOutcome = { ok: true } | NotFound | Unavailable;
export type UpdateOutcome = Found | Invalid | NotFound | Unavailable;

/** The fields of a create (docs/api.md, shorten input), as they arrived. */
export interface ShortenInput {
  url: unknown;
  retentionDays?: unknown;
  /** A custom code; absent, null or '' = generate one. */
  code?: unknown;
  /** absent or null = unlimited. */
  maxVisits?: unknown;
  /** absent, null or '' = none. */
  title?: unknown;
  /** absent or null = none; an array of strings, or as text also one string of comma-separated tags. */
  tags?: unknown;
  /**
   * Which fields came as text (a query string or a form, where numbers are digits and tags may be
   * comma-separated): `true` for every field, or per field. In JSON (and MCP) numbers must be
   * numbers and tags an array.
   */
  textual?: boolean | { retentionDays?: boolean; maxVisits?: boolean; tags?: boolean };
  /**
   * The request that asks for the link: its client address is counted by `create_rate_limit`.
   * Every door onto a create passes it; a caller with no request (the library, a test) is not limited.
   */
  from?: VisitRequest | undefined;
}

/** What the list may be asked besides its page (docs/api.md, list). */
export interface ListFilter {
  q?: string | undefined;
  tags?: readonly string[] | undefined;
}

/** The fields an edit may change (docs/api.md, edit), as the JSON body names them. */
const EDITABLE = ['url', 'retention_days', 'max_visits', 'title', 'tags'] as const;

export interface ServiceOptions {
  store: LinkStore;
  baseUrl: string;
  minShortLength: number;
  maxShortLength: number;
  maxUrlLength: number;
  apiKeys: readonly string[];
  /** Milliseconds since the epoch; injectable for expiry tests. */
  now: () => number;
  randomCode: (length: number) => string;
  log: Logger;
  /** Told of each link created, once it is durable (metrics). */
  created?: () => void;
  /** Makes the event of a counted visit (`visit_tracking: events`); absent: visits are only counted. */
  recorder?: Recorder | undefined;
  /** `visit_tracking` (docs/analytics.md), as the stats report it; default `events`. */
  visitTracking?: VisitTracking;
  /** The instance's reserved words (codes.ts `reservedWords`); default: the service's own. */
  reserved?: ReadonlySet<string>;
  /** `create_rate_limit` (create-limit.ts); absent: creates are not limited. */
  createLimit?: CreateLimiter | undefined;
}

/**
 * What a redirect answers (see `LinkStore.countVisit`: read it at once), or `preview`: a link
 * preview of a live link with a visit limit, answered with a page and not counted (docs/api.md).
 */
export type Visit = VisitDecision | { readonly kind: 'preview' };

const PREVIEW: Visit = { kind: 'preview' };

/** `mapMaybe` for an `f` that may answer with a promise itself. */
function flatMaybe<T, U>(value: MaybePromise<T>, f: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}

/** A request's own question, asked of a live limited link only: is it a link-preview fetcher? */
function isPreview(req: VisitRequest | undefined): boolean {
  return req !== undefined && isPreviewFetcher(req.headers['user-agent']);
}

const NOT_FOUND: NotFound = { ok: false, error: 'not_found' };
const MISSING: Visit = { kind: 'missing' };
const CODE_IN_USE: Conflict = { ok: false, error: 'conflict', detail: 'code already in use' };
const REMOVED: RemoveOutcome = { ok: true };

function rateLimited(retryAfter: number): RateLimited {
  const detail = `too many links created from this address: try again in ${retryAfter} second${retryAfter === 1 ? '' : 's'}`;
  return { ok: false, error: 'rate_limited', detail, retryAfter };
}

export function createService(options: ServiceOptions) {
  const { store, baseUrl, now, log, recorder } = options;
  const reserved = options.reserved ?? RESERVED_SEGMENTS;
  const urlRules = { maxLength: options.maxUrlLength, baseUrl };
  const keyDigests = options.apiKeys.map(digestSecret);

  const seconds = (): number => Math.floor(now() / 1000);

  const shortUrl = (code: string): string => `${baseUrl}/${code}`;

  const view = (rec: LinkRecord): UrlRecord => recordView(rec, baseUrl);

  const found = (rec: LinkRecord | undefined): GetOutcome => (rec ? { ok: true, record: view(rec) } : NOT_FOUND);

  /**
   * Live records newest first, paged, frozen when called: a long list can be read in slices across
   * event-loop turns (see `UrlListing`).
   */
  async function listing(paging: Paging & ListFilter): Promise<UrlListing<MaybePromise<UrlRecord[]>>> {
    // Tags are stored in NFC, so a filter is compared in NFC too, whichever door it came through.
    const tags = paging.tags?.map(normalTag);
    const page = await store.list({ limit: paging.limit, offset: paging.offset, now: seconds(), q: paging.q, tags });
    return {
      total: page.total,
      count: page.count,
      slice: (from, to) => mapMaybe(page.slice(from, to), (records) => records.map(view)),
      release: () => page.release(),
    };
  }

  /**
   * The redirect's decision (docs/api.md): a preview of a live link with a visit limit is a page,
   * counted nothing; anything else is the store's decision, counted for a GET, with the event of
   * the visit when there is a recorder.
   *
   * Only a limited link asks about the `User-Agent`, so ordinary redirects pay nothing for
   * previews. A store in memory (`inMemory`) is asked first without counting — a second lookup of
   * a code just found costs less than reading the request's headers on every redirect — and then,
   * in the same synchronous step, with counting. A database is asked once, except by a preview
   * fetcher: its `User-Agent` is read first (next to a round trip it costs nothing), and only a
   * fetcher's GET pays a second round trip, to learn whether the link has a limit before counting.
   */
  function redirect(
    ask: (count: boolean, source?: VisitEventSource) => MaybePromise<VisitDecision>,
    count: boolean,
    req: VisitRequest | undefined,
    go: boolean,
    inMemory: boolean,
  ): MaybePromise<Visit> {
    if (!count) return go ? ask(false) : mapMaybe(ask(false), (decision) => previewOr(decision, req));
    if (go) return counted(ask, req);
    if (inMemory) {
      return flatMaybe(ask(false), (decision): MaybePromise<Visit> => {
        if (decision.kind !== 'found') return decision;
        return decision.limited && isPreview(req) ? PREVIEW : counted(ask, req);
      });
    }
    if (!isPreview(req)) return counted(ask, req);
    return flatMaybe(ask(false), (decision): MaybePromise<Visit> => (decision.kind === 'found' && decision.limited ? PREVIEW : counted(ask, req)));
  }

  /** A decision without counting, or the preview page it becomes. */
  function previewOr(decision: VisitDecision, req: VisitRequest | undefined): Visit {
    return decision.kind === 'found' && decision.limited && isPreview(req) ? PREVIEW : decision;
  }

  /**
   * The counted ask, with the event's source when events are recorded: a closure the store calls
   * only for a visit it counts. A shared daily key still being fetched (a database's, once a day)
   * is waited for first.
   */
  function counted(ask: (count: boolean, source?: VisitEventSource) => MaybePromise<VisitDecision>, req: VisitRequest | undefined): MaybePromise<Visit> {
    if (recorder === undefined || req === undefined) return ask(true);
    const waiting = recorder.ready();
    if (waiting !== undefined) return waiting.then(() => ask(true, recorder.source(req)));
    return ask(true, recorder.source(req));
  }

  return {
    shortUrl,

    ...createVisitOperations({ store, now, tracking: options.visitTracking ?? 'events' }),

    /** True when `key` is one of the configured admin keys; every key is compared, always. */
    isAdminKey(key: string | undefined): boolean {
      if (key === undefined || key === '' || keyDigests.length === 0) return false;
      return matchesSecret(key, keyDigests);
    },

    async shorten(input: ShortenInput): Promise<ShortenOutcome> {
      // First: every create request counts, valid or not (a refused one does not), and a client
      // past its limit costs no validation and no write.
      if (options.createLimit !== undefined && input.from !== undefined) {
        const wait = options.createLimit.take(input.from);
        if (wait > 0) return rateLimited(wait);
      }
      const textual = (field: 'retentionDays' | 'maxVisits' | 'tags'): boolean =>
        typeof input.textual === 'object' ? input.textual[field] === true : input.textual === true;
      let url: string;
      let retentionDays: number;
      let custom: string | undefined;
      let maxVisits: number | null;
      // Only the labels the link has: most links have neither, and the stores keep nothing for them.
      let labels: Labels | undefined;
      try {
        url = validateUrl(input.url, urlRules);
        retentionDays = parseRetention(input.retentionDays, textual('retentionDays'));
        custom = parseCustomCode(input.code, options.minShortLength, options.maxShortLength, reserved);
        maxVisits = parseMaxVisits(input.maxVisits, textual('maxVisits'));
        labels = labelsOf(parseTitle(input.title), parseTags(input.tags, textual('tags')));
      } catch (err) {
        return invalid(err);
      }
      const createdAt = seconds();
      if (custom !== undefined) {
        // One insert decides: of concurrent creates of one code the store lets exactly one win.
        const record: LinkRecord = { code: custom, url, createdAt, retentionDays, visits: 0, untracked: 0, maxVisits, ...labels };
        try {
          if (!(await store.insert(record, createdAt))) return CODE_IN_USE;
        } catch (err) {
          return unwritable(err);
        }
        options.created?.();
        return { ok: true, record: view(record) };
      }
      try {
        for (const code of candidateCodes(options.randomCode, options.minShortLength, options.maxShortLength, reserved)) {
          const record: LinkRecord = { code, url, createdAt, retentionDays, visits: 0, untracked: 0, maxVisits, ...labels };
          // A taken code is refused at once by the log store; only a write is awaited.
          const inserted = store.insert(record, createdAt);
          if (inserted === false || (inserted !== true && !(await inserted))) continue;
          options.created?.();
          return { ok: true, record: view(record) };
        }
      } catch (err) {
        return unwritable(err);
      }
      log.error('code space exhausted', { min: options.minShortLength, max: options.maxShortLength });
      return { ok: false, error: 'unavailable', detail: `no free short code up to ${options.maxShortLength} characters; raise MAX_SHORT_LENGTH` };
    },

    /** A code outside the code alphabet names no link, so no store is asked (MCP's codes are unchecked). */
    async get(code: string): Promise<GetOutcome> {
      if (!isCodeShaped(code)) return NOT_FOUND;
      return found(await store.get(code, seconds()));
    },

    /** The newest live record whose original URL equals `input` once normalized. */
    async lookup(input: unknown): Promise<LookupOutcome> {
      if (input === undefined || input === null || input === '') return { ok: false, error: 'invalid', detail: 'url is required' };
      const unstorable = typeof input === 'string' ? unstorableText(input, 'url') : undefined;
      if (unstorable !== undefined) return { ok: false, error: 'invalid', detail: unstorable };
      let href: string;
      try {
        href = new URL(String(input)).href;
      } catch {
        return { ok: false, error: 'invalid', detail: 'url must be an absolute URL such as https://example.com/page' };
      }
      return found(await store.newestByUrl(href, seconds()));
    },

    listing,

    /** Live records newest first, paged, filtered by `q` and `tags`; `total` counts every live record kept. */
    async list(paging: Paging & ListFilter): Promise<{ total: number; urls: UrlRecord[] }> {
      const page = await listing(paging);
      try {
        return { total: page.total, urls: await page.slice(0, page.count) };
      } finally {
        page.release();
      }
    },

    /**
     * Edits a live link (docs/api.md, edit): `fields` is the JSON body, whose names are those of the
     * record (`url`, `retention_days`, `max_visits`, `title`, `tags`); any other name is refused,
     * each value is validated as on a create, a `max_visits` of null clears the limit, a `title` of
     * null the title, `tags` of [] the tags, and a `retention_days` of null is refused (0 is "forever"). Fields are checked before the code is looked up, so a bad
     * body is a 400 whether or not the link exists.
     */
    async update(code: string, fields: Readonly<Record<string, unknown>>): Promise<UpdateOutcome> {
      const changes: LinkChanges = {};
      try {
        for (const name of Object.keys(fields)) {
          if (!(EDITABLE as readonly string[]).includes(name)) {
            throw new HttpError(400, `${JSON.stringify(name)} cannot be changed; an edit may hold ${EDITABLE.join(', ')}`);
          }
        }
        if (Object.hasOwn(fields, 'url')) changes.url = validateUrl(fields['url'], urlRules);
        if (Object.hasOwn(fields, 'retention_days')) changes.retentionDays = parseRetentionChange(fields['retention_days']);
        if (Object.hasOwn(fields, 'max_visits')) changes.maxVisits = parseMaxVisits(fields['max_visits']);
        if (Object.hasOwn(fields, 'title')) changes.title = parseTitle(fields['title']);
        if (Object.hasOwn(fields, 'tags')) {
          if (fields['tags'] === null) throw new HttpError(400, 'tags must be an array; [] clears them');
          changes.tags = parseTags(fields['tags']);
        }
      } catch (err) {
        return invalid(err);
      }
      if (!isCodeShaped(code)) return NOT_FOUND;
      try {
        return found(await store.update(code, changes, seconds()));
      } catch (err) {
        return unwritable(err);
      }
    },

    /** Not found when there is no such live code: an expired link is gone for every API, delete included. */
    async remove(code: string): Promise<RemoveOutcome> {
      if (!isCodeShaped(code)) return NOT_FOUND;
      try {
        return (await store.delete(code, seconds())) ? REMOVED : NOT_FOUND;
      } catch (err) {
        return unwritable(err);
      }
    },

    /**
     * Resolves a short code for a redirect; `count` is false for HEAD. The log store answers at
     * once, so the redirect awaits nothing; a database answers with a promise, and so does the log
     * store for a counted visit of a link with a limit (durable first). Such a promise rejects with
     * `StoreUnavailableError` when the visit cannot be written: `storeFailure` (outcomes.ts) makes
     * that the 503 it is. `req` gives the visit's event (with a recorder) and tells a link
     * preview; `go` (`/<code>?go`, the preview page's "Continue") is never a preview.
     */
    visit(code: string, count: boolean, req?: VisitRequest, go = false): MaybePromise<Visit> {
      if (!isCodeShaped(code)) return MISSING;
      return redirect((c, source) => store.countVisit(code, seconds, c, source), count, req, go, store.countVisitIn !== undefined);
    },

    /**
     * `visit` of the code that `text` spells from `start` to its end, for the redirect's fast path
     * (dispatch.ts); undefined when that cannot be a code. A store that answers from memory is
     * asked with the text as it is (no string is made for the code); another only once the code is
     * code-shaped and no reserved word.
     */
    visitIn: store.countVisitIn
      ? // `redirect` written out for the store in memory, with no closure but the event's source.
        (text: string, start: number, count: boolean, req?: VisitRequest): MaybePromise<Visit> | undefined => {
          const decision = store.countVisitIn!(text, start, seconds, false);
          if (decision instanceof Promise) return redirect((c, source) => store.countVisitIn!(text, start, seconds, c, source), count, req, false, true);
          if (decision.kind !== 'found') return decision;
          if (decision.limited && isPreview(req)) return PREVIEW;
          if (!count) return decision;
          if (recorder === undefined || req === undefined) return store.countVisitIn!(text, start, seconds, true);
          if (recorder.ready() !== undefined) return counted((c, source) => store.countVisitIn!(text, start, seconds, c, source), req);
          return store.countVisitIn!(text, start, seconds, true, recorder.source(req));
        }
      : (text: string, start: number, count: boolean, req?: VisitRequest): MaybePromise<Visit> | undefined => {
          const code = text.slice(start);
          return isCodeShaped(code) && !isReserved(code, reserved)
            ? redirect((c, source) => store.countVisit(code, seconds, c, source), count, req, false, false)
            : undefined;
        },
  };
}

export type Service = ReturnType<typeof createService>;

/** A validator's refusal (an `HttpError` 400 with its reason) as an outcome; anything else is a bug. */
function invalid(err: unknown): Invalid {
  if (err instanceof HttpError && err.status === 400 && err.detail !== undefined) return { ok: false, error: 'invalid', detail: err.detail };
  throw err;
}

/** A change the store could not make is an outcome; anything else is a bug (the generic 500). */
function unwritable(err: unknown): Unavailable {
  if (err instanceof StoreUnavailableError) return { ok: false, error: 'unavailable', detail: err.message };
  throw err;
}
