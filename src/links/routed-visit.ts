/**
 * The visit of a link with routing (docs/api.md, where a link sends each visitor): the store
 * answered `routed` and counted nothing; here its validity, its password and its rules are settled,
 * then the store is asked again to count (`routed`), and the answer is the visitor's target, with
 * the short URL's query when the link forwards it. Links without routing never come here: the
 * redirect's one question is the store's `kind`.
 *
 * The order is the order a visitor meets them: a link not yet valid is unknown, one past its
 * validity, expired or used up goes to its fallback (or its page); a protected link asks for its
 * password before anything else is read, previews included; a preview of a limited link gets the
 * preview page; then the first rule that holds gives the target, and the visit is counted.
 */
import { mapMaybe, type MaybePromise, type RoutedDecision, type VisitDecision } from '../store/link-store.ts';
import type { VisitEventSource } from '../visits/event.ts';
import type { Recorder } from '../visits/recorder.ts';
import { queryOf, type RoutedRequest, type RuleVisitors } from './rule-visitor.ts';
import { verifyPassword } from './link-password.ts';
import type { PasswordAttempts } from './password-attempts.ts';
import { firstMatch } from './redirect-rules.ts';

/** What a visit of a protected link answers without a passed password: the form, again, or wait. */
export type PasswordAnswer =
  | { readonly kind: 'password'; readonly status: 200 | 401 }
  | { readonly kind: 'password'; readonly status: 429; readonly retryAfter: number };

/** A `302` that is no visit: a link past its validity, expired or used up, sent to its `fallback_url`. */
export interface Fallback {
  readonly kind: 'fallback';
  readonly url: string;
}

export type RoutedVisit = Exclude<VisitDecision, RoutedDecision> | { readonly kind: 'preview' } | Fallback | PasswordAnswer;

const MISSING: RoutedVisit = { kind: 'missing' };
const PREVIEW: RoutedVisit = { kind: 'preview' };
const FORM: PasswordAnswer = { kind: 'password', status: 200 };
const WRONG: PasswordAnswer = { kind: 'password', status: 401 };

/** The store asked again for the same link, to count (with the visit's event) once the routing is settled. */
export type CountAgain = (count: boolean, source?: VisitEventSource) => MaybePromise<VisitDecision>;

export interface RoutedDeps {
  /** Unix seconds now. */
  seconds: () => number;
  recorder: Recorder | undefined;
  visitors: RuleVisitors;
  attempts: PasswordAttempts;
  isPreview: (req: RoutedRequest | undefined) => boolean;
}

/** The query characters a `Location` may carry as they came: printable ASCII; the others are escaped. */
const UNSAFE = /[^\x21-\x7e]/g;

/**
 * `target` with the short URL's `query` appended (`forward_query`): after the target's own query
 * (joined by `&`), before its fragment, which stays last. An empty query changes nothing.
 */
export function withQuery(target: string, query: string): string {
  if (query === '') return target;
  const safe = query.replace(UNSAFE, (c) => encodeURIComponent(c));
  const hash = target.indexOf('#');
  const head = hash === -1 ? target : target.slice(0, hash);
  const tail = hash === -1 ? '' : target.slice(hash);
  const joiner = !head.includes('?') ? '?' : head.endsWith('?') || head.endsWith('&') ? '' : '&';
  return head + joiner + safe + tail;
}

/** The query a link forwards: without the preview page's own `go` (docs/api.md, link previews). */
function forwarded(query: string, go: boolean): string {
  return go
    ? query
        .split('&')
        .filter((part) => part !== 'go' && !part.startsWith('go='))
        .join('&')
    : query;
}

/** The password a request brings: the form's (`POST /<code>`), else the `X-Link-Password` header's. */
function givenPassword(req: RoutedRequest | undefined, posted: string | undefined): string | undefined {
  if (posted !== undefined) return posted;
  const header = req?.headers['x-link-password'];
  return typeof header === 'string' ? header : undefined;
}

/** A gone link's answer: its fallback when it has one, else what it is. */
const goneTo = (decision: RoutedDecision, gone: 'expired' | 'limit_reached'): RoutedVisit =>
  decision.routing.fallbackUrl !== undefined ? { kind: 'fallback', url: decision.routing.fallbackUrl } : { kind: gone };

/** The count, the rule chosen: the store's answer as the visitor's. */
function counted(
  recorder: Recorder | undefined,
  decision: RoutedDecision,
  req: RoutedRequest | undefined,
  again: CountAgain,
  target: string,
  rule: number | null,
): MaybePromise<RoutedVisit> {
  const answer = (settled: VisitDecision): RoutedVisit => {
    if (settled.kind === 'found') return { kind: 'found', url: target, limited: settled.limited };
    if (settled.kind === 'expired' || settled.kind === 'limit_reached') return goneTo(decision, settled.kind);
    return MISSING;
  };
  if (recorder === undefined || req === undefined) return mapMaybe(again(true), answer);
  // The event keeps which rule sent the visitor (docs/analytics.md).
  const source = (): VisitEventSource => {
    const event = recorder.source(req);
    return rule === null ? event : (mode, made) => (mode === 'counted' ? event(mode, made) : { ...event(mode), rule });
  };
  const waiting = recorder.ready();
  if (waiting !== undefined) return waiting.then(() => mapMaybe(again(true, source()), answer));
  return mapMaybe(again(true, source()), answer);
}

export function createRoutedVisits(deps: RoutedDeps) {
  const { seconds, recorder, visitors, attempts } = deps;

  /** A link whose password (if any) is passed: its target, counted for a GET. */
  function passed(
    decision: RoutedDecision,
    count: boolean,
    req: RoutedRequest | undefined,
    go: boolean,
    again: CountAgain,
    protectedLink: boolean,
  ): MaybePromise<RoutedVisit> {
    const { routing } = decision;
    if (count && !go && !protectedLink && decision.limited && deps.isPreview(req)) return PREVIEW;
    const rule = routing.rules === undefined || req === undefined ? null : firstMatch(routing.rules, visitors.of(req));
    const url = rule === null ? decision.url : routing.rules![rule]!.url;
    const target = routing.forwardQuery === true ? withQuery(url, forwarded(queryOf(req?.url), go)) : url;
    if (!count) return { kind: 'found', url: target, limited: decision.limited };
    return counted(recorder, decision, req, again, target, rule);
  }

  /**
   * What `decision`'s link answers this request: `count` for a GET, `go` for the preview page's
   * "Continue", `posted` the password of a `POST /<code>`'s form, `link` the link's store key (its
   * password attempts are counted by it), `again` the store's count once settled.
   */
  return function routedVisit(
    decision: RoutedDecision,
    link: string,
    count: boolean,
    req: RoutedRequest | undefined,
    go: boolean,
    posted: string | undefined,
    again: CountAgain,
  ): MaybePromise<RoutedVisit> {
    const { routing } = decision;
    const now = seconds();
    if (routing.validSince !== undefined && now < routing.validSince) return MISSING;
    const gone = decision.gone ?? (routing.validUntil !== undefined && now >= routing.validUntil ? 'expired' : null);
    if (gone !== null) return goneTo(decision, gone);
    const hash = routing.passwordHash;
    if (hash === undefined) return passed(decision, count, req, go, again, false);
    const given = givenPassword(req, posted);
    if (given === undefined) return FORM;
    const address = req === undefined ? 'unknown' : visitors.addressOf(req);
    const verdict = attempts.check(link, address);
    if (!verdict.ok) return { kind: 'password', status: 429, retryAfter: verdict.retryAfter };
    return verifyPassword(given, hash).then((right) => {
      if (!right) {
        attempts.failed(link, address);
        return WRONG;
      }
      attempts.passed(link, address);
      return passed(decision, count, req, go, again, true);
    });
  };
}
