/**
 * The "did you mean" of an unknown library option (src/suggest.ts), as a pure function over one
 * table of spellings: case and separators, near misses, and names too far from anything.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closestName } from '../../src/config/suggest.ts';

const KNOWN = ['baseUrl', 'port', 'apiKeys', 'apiToken', 'publicRedirects', 'dataDir', 'staticDir', 'logLevel', 'logger', 'now', 'fs'];

const ROWS: readonly [name: string, expected: string | undefined][] = [
  // The same letters in another case or with separators: the env and file spellings.
  ['API_TOKEN', 'apiToken'],
  ['api_keys', 'apiKeys'],
  ['public-redirects', 'publicRedirects'],
  ['BASEURL', 'baseUrl'],
  ['data_dir', 'dataDir'],
  // Near misses: a letter missing, added, changed, or two swapped.
  ['apiKey', 'apiKeys'],
  ['publicRedirect', 'publicRedirects'],
  ['loger', 'logger'],
  ['logLevl', 'logLevel'],
  ['prot', 'port'],
  ['apiTokn', 'apiToken'],
  // Too far from anything, or too short to guess.
  ['token', undefined],
  ['basePath', undefined],
  ['staticDirectory', undefined],
  ['log', undefined],
  ['x', undefined],
  ['', undefined],
];

for (const [name, expected] of ROWS) {
  test(`${JSON.stringify(name)} → ${expected ?? 'no suggestion'}`, () => {
    assert.equal(closestName(name, KNOWN), expected);
  });
}

test('the nearest of several candidates wins; a tie goes to the first known name', () => {
  assert.equal(closestName('dataDirs', ['dataDir', 'dataDirz']), 'dataDir');
  assert.equal(closestName('abcdefx', ['abcdefy', 'abcdefz']), 'abcdefy');
  assert.equal(closestName('abcdef', ['abcdxx', 'abcdex']), 'abcdex');
});
