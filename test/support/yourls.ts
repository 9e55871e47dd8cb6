/**
 * Requests to YOURLS' API (docs/compat.md#yourls-api) and the exact answer each format must give,
 * for the tests of `test/peers/yourls*.test.ts`. What a format must be is written out here from
 * YOURLS' behaviour, independently of the encoders under test: JSON with every `/` escaped (the
 * tests' data is ASCII), JSONP as `callback(json)`, XML read element by element by a strict
 * reader, plain text as the bare line.
 */
import assert from 'node:assert/strict';
import type { Harness, Reply } from './helpers.ts';
import { asXml, readXml } from './xml.ts';

export const FORMATS = ['json', 'jsonp', 'xml', 'simple'] as const;
export type Format = (typeof FORMATS)[number];

export const TYPES: Readonly<Record<Format, string>> = {
  json: 'application/json; charset=utf-8',
  jsonp: 'application/javascript; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  simple: 'text/plain; charset=utf-8',
};

/** What one answer must be: its status, its fields in order (what json, jsonp and xml show), its simple line. */
export interface Expected {
  status: number;
  fields: Record<string, unknown>;
  simple: string;
}

/** The callback the tests' JSONP requests name. */
export const CALLBACK = 'yourls.cb_1';

/** `GET /yourls-api.php` with `params` as its query string. */
export function api(h: Harness, params: Record<string, string>): Promise<Reply> {
  return h.req(`/yourls-api.php?${new URLSearchParams(params)}`);
}

/** `params` asking for `format` (and naming the callback for jsonp). */
export function inFormat(params: Record<string, string>, format: Format): Record<string, string> {
  return format === 'jsonp' ? { ...params, format, callback: CALLBACK } : { ...params, format };
}

/** PHP's json_encode of ASCII data: JSON.stringify with every `/` escaped. */
export function phpJson(value: unknown): string {
  return JSON.stringify(value).replaceAll('/', '\\/');
}

/** Asserts that `reply` is exactly `expected` in `format`; jsonp adds the callback to the fields, as YOURLS does. */
export function assertAnswer(reply: Reply, format: Format, expected: Expected): void {
  const what = `${format}: ${reply.status} ${reply.body}`;
  assert.equal(reply.status, expected.status, what);
  assert.equal(reply.headers['content-type'], TYPES[format], what);
  switch (format) {
    case 'json':
      assert.equal(reply.body, phpJson(expected.fields), what);
      break;
    case 'jsonp':
      assert.equal(reply.body, `${CALLBACK}(${phpJson({ ...expected.fields, callback: CALLBACK })})`, what);
      break;
    case 'xml':
      assert.deepEqual(readXml(reply.body), ['root', asXml(expected.fields)], what);
      break;
    case 'simple':
      assert.equal(reply.body, expected.simple, what);
      break;
  }
}

/** Asks `params` in every format and asserts each answer: for actions that change nothing. */
export async function assertEveryFormat(h: Harness, params: Record<string, string>, expected: Expected): Promise<void> {
  for (const format of FORMATS) assertAnswer(await api(h, inFormat(params, format)), format, expected);
}
