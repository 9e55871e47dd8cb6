/**
 * The REST edit's JSON names in the service's terms (`api/json-body.ts` `editOf`): the record's
 * names become a `LinkEdit`, and any other name is refused by name before the service is asked,
 * `__proto__` and `constructor` included (the names are the request's text). Pure.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { editOf } from '../../src/api/json-body.ts';

const REFUSED = (name: string): string =>
  `${JSON.stringify(name)} cannot be changed; an edit may hold url, retention_days, max_visits, title, tags, rules, forward_query, valid_since, valid_until, fallback_url, password`;

test("an edit's JSON names become the service's, values as sent", () => {
  assert.deepEqual(editOf({}), {});
  assert.deepEqual(editOf({ url: 'u', retention_days: null, max_visits: 3, title: null, tags: [] }), {
    url: 'u',
    retentionDays: null,
    maxVisits: 3,
    title: null,
    tags: [],
  });
});

test('any other name is refused by name, the first in the body', () => {
  assert.equal(editOf({ retentionDays: 3 }), REFUSED('retentionDays'));
  assert.equal(editOf({ url: 'u', visit_count: 0, code: 'x' }), REFUSED('visit_count'));
  assert.equal(editOf(JSON.parse('{"__proto__":{"url":"x"}}') as Record<string, unknown>), REFUSED('__proto__'));
  assert.equal(editOf({ constructor: 1 }), REFUSED('constructor'));
});
