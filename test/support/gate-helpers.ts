/**
 * What the gate tests share: a token, the exact 401 details, the assertion of an exact 401, and a
 * spy on the operations behind protected routes.
 */
import assert from 'node:assert/strict';
import type { Refusal } from '../../src/http/gate.ts';
import { CORS_HEADERS, SECURITY_HEADERS } from '../../src/http/headers.ts';
import type { Service } from '../../src/links/service.ts';

/** Uses every character RFC 6750's b64token allows. */
export const TOKEN = 'gate-T0ken_9.~+/==';
export const RIGHT = `Bearer ${TOKEN}`;

export const DETAIL: Readonly<Record<Refusal, string>> = {
  missing: 'authentication required: send the header Authorization: Bearer <token>',
  invalid: 'invalid bearer token',
  repeated: 'more than one Authorization header',
};

/** The subset of a reply an exact-401 check needs (test/helpers `Reply` has it). */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * The exact 401: status, JSON body, WWW-Authenticate, and the usual CORS and security headers.
 * `head`: the answer to a HEAD request, which has the headers of the body but not the body.
 */
export function assert401(r: Answer, reason: Refusal, label: string, head = false): void {
  const body = JSON.stringify({ detail: DETAIL[reason] });
  assert.equal(r.status, 401, `${label}: status (body ${r.body})`);
  assert.equal(r.body, head ? '' : body, `${label}: body`);
  assert.equal(r.headers['content-type'], 'application/json', `${label}: content-type`);
  assert.equal(r.headers['content-length'], String(Buffer.byteLength(body)), `${label}: content-length`);
  assert.equal(r.headers['www-authenticate'], 'Bearer', `${label}: WWW-Authenticate`);
  for (const [name, value] of [...CORS_HEADERS, ...SECURITY_HEADERS]) {
    assert.equal(r.headers[name.toLowerCase()], value, `${label}: ${name}`);
  }
  assert.equal(r.headers['allow'], undefined, `${label}: no Allow (the route is not revealed)`);
  assert.equal(r.headers['access-control-allow-credentials'], undefined, `${label}: no credentials`);
}

/**
 * The service operations behind protected routes. `visit` (the redirect) is one of them: short
 * links are gated too unless `publicRedirects` is on, which none of the spy's users sets.
 */
export const PROTECTED_OPS = ['shorten', 'get', 'lookup', 'list', 'listing', 'remove', 'update', 'visit'] as const;

/**
 * Records every call of a protected operation: the route handlers call them through this very
 * object, so a call means a protected handler ran. `calls` may be emptied between requests.
 */
export function spyOnProtected(service: Service): { calls: string[] } {
  const spy = { calls: [] as string[] };
  const ops = service as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of PROTECTED_OPS) {
    const original = ops[name]!.bind(service);
    ops[name] = (...args: unknown[]) => {
      spy.calls.push(name);
      return original(...args);
    };
  }
  return spy;
}
