/**
 * The bearer-token gate (docs/security.md), as a pure decision: given the method, the route the router
 * matched for the request (or none) and the raw request headers, may this request go on? Which
 * paths are public is data in the route table (`Route.public`); the gate decides on the very match
 * the dispatch then uses, so no spelling of a path can be routed one way and gated another.
 */
import { digestSecret, matchesSecret } from '../secrets.ts';
import type { Route } from './router.ts';

export type Refusal = 'missing' | 'invalid' | 'repeated';

export type GateVerdict = { pass: true } | { pass: false; reason: Refusal; detail: string };

/**
 * `route`: the route the router matched for this request, or `undefined` for an unknown path or a
 * target outside the base path (protected). `rawHeaders`: `req.rawHeaders`, names and values in
 * turn, duplicates kept.
 */
export type Gate = (method: string, route: Pick<Route<unknown>, 'public'> | undefined, rawHeaders: readonly string[]) => GateVerdict;

const PASS: GateVerdict = { pass: true };

/** The 401 details: they say what to fix and never echo what was sent. */
const REFUSALS: Readonly<Record<Refusal, GateVerdict>> = {
  missing: { pass: false, reason: 'missing', detail: 'authentication required: send the header Authorization: Bearer <token>' },
  invalid: { pass: false, reason: 'invalid', detail: 'invalid bearer token' },
  repeated: { pass: false, reason: 'repeated', detail: 'more than one Authorization header' },
};

/** True when `method` on `route` needs no token. */
export function isPublic(route: Pick<Route<unknown>, 'public'>, method: string): boolean {
  const open = route.public;
  return open === true || open?.includes(method) === true;
}

/**
 * Every value of the header `name` (lower-case) in a raw header list. Node keeps only the first
 * `Authorization` in `req.headers`; a second one must not slip past unseen, so the gate reads them all.
 */
export function headerValues(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === name) values.push(rawHeaders[i + 1]!);
  }
  return values;
}

/**
 * The gate for `token`; an empty token lets every request pass. It decides on the route the router
 * matched (the caller matches once, for both), so no path can be routed one way and gated another.
 */
export function createGate(token: string): Gate {
  if (token === '') {
    return function open() {
      return PASS;
    };
  }
  // The whole value is compared as sent: no trimming, no case folding of the scheme, exactly one space.
  const expected = [digestSecret(`Bearer ${token}`)];

  return function gate(method, route, rawHeaders) {
    if (route && isPublic(route, method)) return PASS;
    const values = headerValues(rawHeaders, 'authorization');
    if (values.length === 0) return REFUSALS.missing;
    if (values.length > 1) return REFUSALS.repeated;
    return matchesSecret(values[0]!, expected) ? PASS : REFUSALS.invalid;
  };
}
