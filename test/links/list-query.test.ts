/**
 * The rules of a list's query (docs/api.md, list) as the service checks them for every door
 * (`links/list-query.ts`): text no store can hold, each length and count at its limit and one past
 * it, counted in characters (code points: an emoji is one), and the page's ranges, from text as a
 * query string sends it and from numbers as JSON does. Pure: no store, no socket.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkListQuery, checkSearch, checkTagFilter, type ListQuery } from '../../src/links/list-query.ts';
import { MAX_LIMIT, MAX_SEARCH_LENGTH, MAX_TAG_LENGTH, MAX_TAGS, Refusal } from '../../src/links/validate.ts';

/** One character outside the BMP: two UTF-16 units, one code point. */
const EMOJI = '\u{1F600}';
const LONE_SURROGATE = '\uD800';
const SURROGATE_REASON = 'must not contain a lone UTF-16 surrogate (it is not Unicode text)';

const refusal = (query: ListQuery): string => {
  const checked = checkListQuery(query);
  assert.ok(checked instanceof Refusal, `${JSON.stringify(query)} was accepted: ${JSON.stringify(checked)}`);
  return checked.detail;
};

const accepted = (query: ListQuery) => {
  const checked = checkListQuery(query);
  assert.ok(!(checked instanceof Refusal), `${JSON.stringify(query)} was refused: ${checked instanceof Refusal ? checked.detail : ''}`);
  return checked;
};

test('an empty query is every live link, from the first', () => {
  assert.deepEqual(accepted({}), { limit: undefined, offset: 0, q: undefined, tags: undefined });
  assert.deepEqual(accepted({ tags: [] }), { limit: undefined, offset: 0, q: undefined, tags: undefined });
});

test('q: a NUL or a lone surrogate is refused, naming q', () => {
  assert.equal(refusal({ q: 'a\0b' }), 'q must not contain a NUL character');
  assert.equal(refusal({ q: `a${LONE_SURROGATE}b` }), `q ${SURROGATE_REASON}`);
  // A surrogate with its pair is a character like any other.
  assert.equal(accepted({ q: `a${EMOJI}b` }).q, `a${EMOJI}b`);
});

test('q: 1 to 200 characters, counted in code points', () => {
  assert.equal(MAX_SEARCH_LENGTH, 200);
  assert.equal(refusal({ q: '' }), 'q must be 1 to 200 characters long, not 0');
  assert.equal(accepted({ q: 'e' }).q, 'e');
  assert.equal(accepted({ q: 'x'.repeat(200) }).q, 'x'.repeat(200));
  assert.equal(refusal({ q: 'x'.repeat(201) }), 'q must be 1 to 200 characters long, not 201');
  // 200 emoji are 400 UTF-16 units and still 200 characters.
  assert.equal(accepted({ q: EMOJI.repeat(200) }).q, EMOJI.repeat(200));
  assert.equal(refusal({ q: EMOJI.repeat(201) }), 'q must be 1 to 200 characters long, not 201');
  // Length first, then what a store can hold: the reason a client can act on first.
  assert.equal(refusal({ q: `${'x'.repeat(201)}\0` }), 'q must be 1 to 200 characters long, not 202');
  assert.ok(checkSearch('ok') === 'ok');
});

test('tag filter: a NUL or a lone surrogate in a tag is refused with the rule of a link tag', () => {
  assert.equal(refusal({ tags: ['work', 'a\0b'] }), 'a tag must not contain a NUL character');
  assert.equal(refusal({ tags: [`a${LONE_SURROGATE}`] }), `a tag ${SURROGATE_REASON}`);
  assert.equal(refusal({ tags: ['a\0b'], tagsAsText: true }), 'a tag must not contain a NUL character');
});

test('tag filter: each tag 1 to 50 characters (code points) after trimming, at most 20 tags', () => {
  assert.equal(MAX_TAG_LENGTH, 50);
  assert.equal(MAX_TAGS, 20);
  assert.deepEqual(accepted({ tags: [EMOJI.repeat(50)] }).tags, [EMOJI.repeat(50)]);
  assert.equal(refusal({ tags: [EMOJI.repeat(51)] }), 'a tag must be 1 to 50 characters long (after trimming spaces), not 51');
  assert.deepEqual(accepted({ tags: [` ${'t'.repeat(50)} `] }).tags, ['t'.repeat(50)]);
  assert.equal(refusal({ tags: ['t'.repeat(51)] }), 'a tag must be 1 to 50 characters long (after trimming spaces), not 51');
  // As one value per tag (JSON, Shlink), a blank tag is a tag of no characters.
  assert.equal(refusal({ tags: ['  '] }), 'a tag must be 1 to 50 characters long (after trimming spaces), not 0');
  const twenty = Array.from({ length: 20 }, (_, i) => `t${String(i).padStart(2, '0')}`);
  assert.deepEqual(accepted({ tags: twenty }).tags, twenty);
  assert.equal(refusal({ tags: [...twenty, 'u'] }), 'a link may have at most 20 distinct tags, not 21');
  // Duplicates are one tag: 21 values of 20 distinct tags are accepted.
  assert.deepEqual(accepted({ tags: [...twenty, 't00'] }).tags, twenty);
});

test('tag filter: as text (a query string) commas separate tags and an empty value is none; as values a comma is refused', () => {
  assert.deepEqual(accepted({ tags: ['b,a', 'c', ''], tagsAsText: true }).tags, ['a', 'b', 'c']);
  assert.equal(accepted({ tags: [','], tagsAsText: true }).tags, undefined);
  assert.equal(refusal({ tags: ['a,b'] }), 'a tag must not contain a comma: "a,b"');
  // Compared as stored: in NFC, sorted.
  assert.deepEqual(accepted({ tags: ['e\u0301', 'b'] }).tags, ['b', '\u00e9']);
  assert.equal(checkTagFilter([], false), undefined);
});

test('limit 1 to 1000 and offset 0 or more: from digits as a query string sends them, or from numbers', () => {
  assert.equal(MAX_LIMIT, 1000);
  for (const limit of [1, '1', 1000, '1000']) assert.equal(accepted({ limit }).limit, Number(limit), String(limit));
  for (const limit of [0, '0', 1001, '1001', 1.5, '1.5', -1, '-1', '', '+5', '1e2', Number.NaN])
    assert.equal(refusal({ limit }), 'limit must be an integer from 1 to 1000', JSON.stringify(limit));
  for (const offset of [0, '0', 7, '7', 1_000_000]) assert.equal(accepted({ offset }).offset, Number(offset), String(offset));
  for (const offset of [-1, '-1', 1.5, '1.5', '', 'abc', '1e3', Number.MAX_SAFE_INTEGER + 1])
    assert.equal(refusal({ offset }), 'offset must be an integer of 0 or more', JSON.stringify(offset));
  // The order REST has always checked them in: the page, then q, then the tags.
  assert.equal(refusal({ limit: 0, q: '', tags: ['\0'] }), 'limit must be an integer from 1 to 1000');
  assert.equal(refusal({ q: '', tags: ['\0'] }), 'q must be 1 to 200 characters long, not 0');
});
