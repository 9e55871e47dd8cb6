/**
 * The redirect's decision (docs/api.md): the hot path of the service, kept apart from the rest so
 * that nothing is added to it. It answers what the store decided — a value at once from a store in
 * memory, a promise from a database — and never an outcome object: the redirect allocates nothing
 * it does not need.
 */
import { mapMaybe, type LinkStore, type MaybePromise, type VisitDecision } from '../store/link-store.ts';
import { createRuleVisitors, type RoutedRequest, type RuleVisitors } from './rule-visitor.ts';
import type { VisitEventSource } from '../visits/event.ts';
import { isPreviewFetcher } from '../visits/preview-fetchers.ts';
import type { Recorder, VisitRequest } from '../visits/recorder.ts';
import { isCodeShaped, isReserved } from './codes.ts';
import { storeKey } from './domains.ts';
import { PasswordAttempts } from './password-attempts.ts';
import { createRoutedVisits, type RoutedVisit } from './routed-visit.ts';

/**
 * What a redirect answers (see `LinkStore.countVisit`: read it at once), or `preview`: a link
 * preview of a live link with a visit limit, answered with a page and not counted (docs/api.md);
 * for a link with routing, its fallback or its password form (`routed-visit.ts`).
 */
export type Visit = RoutedVisit;

const PREVIEW: Visit = { kind: 'preview' };
const MISSING: Visit = { kind: 'missing' };

/** `mapMaybe` for an `f` that may answer with a promise itself. */
function flatMaybe<T, U>(value: MaybePromise<T>, f: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}

/** A request's own question, asked of a live limited link only: is it a link-preview fetcher? */
function isPreview(req: VisitRequest | undefined): boolean {
  return req !== undefined && isPreviewFetcher(req.headers['user-agent']);
}

type Ask = (count: boolean, source?: VisitEventSource) => MaybePromise<VisitDecision>;

export interface RedirectDeps {
  store: LinkStore;
  /** Unix seconds now, read by the store only when it needs the time. */
  seconds: () => number;
  /** Makes the event of a counted visit (`visit_tracking: events`); absent: visits are only counted. */
  recorder: Recorder | undefined;
  /** The instance's reserved words (codes.ts `reservedWords`). */
  reserved: ReadonlySet<string>;
  /** What redirect rules may ask of a request (rule-visitor.ts); default: its socket address, no country database. */
  visitors?: RuleVisitors | undefined;
  /** Wrong password attempts per link and address (password-attempts.ts); default: 5 a minute, on `seconds`. */
  attempts?: PasswordAttempts | undefined;
}

/**
 * A preview of a live link with a visit limit is a page, counted nothing; anything else is the
 * store's decision, counted for a GET, with the event of the visit when there is a recorder.
 *
 * Only a limited link asks about the `User-Agent`, so ordinary redirects pay nothing for
 * previews. A store in memory (`inMemory`) is asked first without counting — a second lookup of
 * a code just found costs less than reading the request's headers on every redirect — and then,
 * in the same synchronous step, with counting. A database is asked once, except by a preview
 * fetcher: its `User-Agent` is read first (next to a round trip it costs nothing), and only a
 * fetcher's GET pays a second round trip, to learn whether the link has a limit before counting.
 * A link with routing is answered `routed` and counted nothing, whichever way it was asked.
 */
function redirectWith(
  recorder: Recorder | undefined,
  ask: Ask,
  count: boolean,
  req: VisitRequest | undefined,
  go: boolean,
  inMemory: boolean,
): MaybePromise<VisitDecision | typeof PREVIEW> {
  if (!count) return go ? ask(false) : mapMaybe(ask(false), (decision) => previewOr(decision, req));
  if (go) return countedWith(recorder, ask, req);
  if (inMemory) {
    return flatMaybe(ask(false), (decision): MaybePromise<VisitDecision | typeof PREVIEW> => {
      if (decision.kind !== 'found') return decision;
      return decision.limited && isPreview(req) ? PREVIEW : countedWith(recorder, ask, req);
    });
  }
  if (!isPreview(req)) return countedWith(recorder, ask, req);
  return flatMaybe(ask(false), (decision) => (decision.kind === 'found' && decision.limited ? PREVIEW : countedWith(recorder, ask, req)));
}

/** A decision without counting, or the preview page it becomes. */
function previewOr(decision: VisitDecision, req: VisitRequest | undefined): VisitDecision | typeof PREVIEW {
  return decision.kind === 'found' && decision.limited && isPreview(req) ? PREVIEW : decision;
}

/**
 * The counted ask, with the event's source when events are recorded: a closure the store calls
 * only for a visit it counts. A shared daily key still being fetched (a database's, once a day)
 * is waited for first.
 */
function countedWith(recorder: Recorder | undefined, ask: Ask, req: VisitRequest | undefined): MaybePromise<VisitDecision> {
  if (recorder === undefined || req === undefined) return ask(true);
  const waiting = recorder.ready();
  if (waiting !== undefined) return waiting.then(() => ask(true, recorder.source(req)));
  return ask(true, recorder.source(req));
}

export function createRedirect({ store, seconds, recorder, reserved, ...deps }: RedirectDeps) {
  const routedVisit = createRoutedVisits({
    seconds,
    recorder,
    visitors: deps.visitors ?? createRuleVisitors({ trustProxy: 0, geoipHeader: '', seconds }),
    attempts: deps.attempts ?? new PasswordAttempts({ now: () => seconds() * 1000 }),
    isPreview,
  });
  const inMemory = store.countVisitIn !== undefined;

  /** The store's answer for the link of `key`, a link with routing settled (`routed-visit.ts`). */
  function settled(
    key: string,
    decision: VisitDecision | typeof PREVIEW,
    count: boolean,
    req: RoutedRequest | undefined,
    go: boolean,
    posted: string | undefined,
  ): MaybePromise<Visit> {
    if (decision.kind !== 'routed') return decision;
    return routedVisit(decision, key, count, req, go, posted, (c, source) => store.countVisit(key, seconds, c, source, true));
  }

  /**
   * Resolves a short code for a redirect; `count` is false for HEAD. The log store answers at
   * once, so the redirect awaits nothing; a database answers with a promise, and so does the log
   * store for a counted visit of a link with a limit (durable first). Such a promise rejects with
   * the store's refusal when the visit cannot be written: `unavailableOf` (outcomes.ts) tells a
   * door it is the 503 it stands for. `req` gives the visit's event (with a recorder) and tells a
   * link preview; `go` (`/<code>?go`, the preview page's "Continue") is never a preview. `domain`:
   * the domain the request was sent to (`Domains.ofRequest`), null for the default one. `posted`:
   * the password a `POST /<code>` sent in its form.
   */
  function visit(code: string, count: boolean, req?: RoutedRequest, go = false, domain: string | null = null, posted?: string): MaybePromise<Visit> {
    if (!isCodeShaped(code)) return MISSING;
    // The store's key of the code on its domain (`domains.ts`).
    const key = storeKey(code, domain);
    const decided = redirectWith(recorder, (c, source) => store.countVisit(key, seconds, c, source), count, req, go, inMemory);
    return flatMaybe(decided, (decision) => settled(key, decision, count, req, go, posted));
  }

  return {
    visit,

    /**
     * `visitIn` for a request sent to another domain than the default one: the code's key on that
     * domain is a new string (`domains.ts`), so it is asked as any store is asked for a code.
     */
    visitOn(text: string, start: number, count: boolean, req: RoutedRequest, domain: string): MaybePromise<Visit> | undefined {
      const code = text.slice(start);
      return isCodeShaped(code) && !isReserved(code, reserved) ? visit(code, count, req, false, domain) : undefined;
    },

    /**
     * `visit` of the code that `text` spells from `start` to its end, for the redirect's fast path
     * (dispatch.ts); undefined when that cannot be a code. A store that answers from memory is
     * asked with the text as it is (no string is made for the code); another only once the code is
     * code-shaped and no reserved word.
     */
    visitIn: store.countVisitIn
      ? // `redirect` written out for the store in memory, with no closure but the event's source.
        (text: string, start: number, count: boolean, req?: RoutedRequest): MaybePromise<Visit> | undefined => {
          const decision = store.countVisitIn!(text, start, seconds, false);
          if (decision instanceof Promise) return visit(text.slice(start), count, req);
          if (decision.kind !== 'found') return decision.kind === 'routed' ? settled(text.slice(start), decision, count, req, false, undefined) : decision;
          if (decision.limited && isPreview(req)) return PREVIEW;
          if (!count) return decision;
          if (recorder === undefined || req === undefined) return store.countVisitIn!(text, start, seconds, true) as MaybePromise<Visit>;
          if (recorder.ready() !== undefined) return visit(text.slice(start), count, req);
          return store.countVisitIn!(text, start, seconds, true, recorder.source(req)) as MaybePromise<Visit>;
        }
      : (text: string, start: number, count: boolean, req?: RoutedRequest): MaybePromise<Visit> | undefined => {
          const code = text.slice(start);
          return isCodeShaped(code) && !isReserved(code, reserved) ? visit(code, count, req) : undefined;
        },
  };
}
