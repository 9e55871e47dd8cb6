/**
 * Bad `limit`/`offset` query strings and the parameter each 400 must name: one table for the pure
 * `checkPaging` test (test/links/validate.test.ts) and for the same answers over HTTP.
 */
export const BAD_PAGING: readonly (readonly [query: string, names: RegExp])[] = [
  ['limit=0', /limit/],
  ['limit=1001', /limit/],
  ['limit=-1', /limit/],
  ['limit=abc', /limit/],
  ['limit=1.5', /limit/],
  ['limit=', /limit/],
  ['limit=+5', /limit/],
  ['limit=1e2', /limit/],
  ['limit=99999', /limit/],
  ['offset=-1', /offset/],
  ['offset=abc', /offset/],
  ['offset=1.5', /offset/],
  ['offset=', /offset/],
  ['offset=1e3', /offset/],
  ['limit=0&offset=0', /limit/],
  ['limit=5&offset=-1', /offset/],
];
