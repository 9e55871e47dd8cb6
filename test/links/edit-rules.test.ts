/**
 * The rules of an edit and a create as the service checks them for every door (`checkEdit`,
 * `checkCreate`): text no store can hold in the URL, the title and the tags, each length and count
 * at its limit and one past it (in code points), and what `null` means in an edit. Pure.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RESERVED_SEGMENTS } from '../../src/links/codes.ts';
import { checkEdit, type LinkEdit } from '../../src/links/edits.ts';
import { checkCreate, type ShortenInput } from '../../src/links/shorten.ts';
import { MAX_RETENTION_DAYS, MAX_TITLE_LENGTH, MAX_VISITS, Refusal, type UrlRules } from '../../src/links/validate.ts';

const URLS: UrlRules = { maxLength: 60, baseUrl: 'https://s.example' };
const CODES = { minShortLength: 6, maxShortLength: 12, reserved: RESERVED_SEGMENTS };
const EMOJI = '\u{1F600}';
const LONE_SURROGATE = '\uDC00';
const twenty = Array.from({ length: 20 }, (_, i) => `t${String(i).padStart(2, '0')}`);

const editRefusal = (edit: LinkEdit): string => {
  const checked = checkEdit(edit, URLS);
  assert.ok(checked instanceof Refusal, `${JSON.stringify(edit)} was accepted`);
  return checked.detail;
};

const edited = (edit: LinkEdit) => {
  const checked = checkEdit(edit, URLS);
  assert.ok(!(checked instanceof Refusal), `${JSON.stringify(edit)} was refused: ${checked instanceof Refusal ? checked.detail : ''}`);
  return checked;
};

const createRefusal = (input: ShortenInput): string => {
  const checked = checkCreate(input, URLS, CODES);
  assert.ok(checked instanceof Refusal, `${JSON.stringify(input)} was accepted`);
  return checked.detail;
};

test('an edit changes only the fields it gives, each by its rule, in the service names', () => {
  assert.deepEqual(edited({}), {});
  assert.deepEqual(edited({ url: 'HTTPS://Example.COM/a b' }), { url: 'https://example.com/a%20b' });
  assert.deepEqual(edited({ retentionDays: 0, maxVisits: null, title: null, tags: [] }), { retentionDays: 0, maxVisits: null, title: null, tags: [] });
  assert.deepEqual(edited({ title: '' }), { title: null }, 'an empty title is none');
  assert.deepEqual(edited({ tags: [' b ', 'a', 'b'] }), { tags: ['a', 'b'] });
  // undefined is absent, as a JSON body cannot say it.
  assert.deepEqual(edited({ url: undefined, title: 'T' }), { title: 'T' });
});

test('an edit: null clears the limit and the title, and is refused for the retention and the tags', () => {
  assert.equal(editRefusal({ retentionDays: null }), `retention_days must be an integer from 0 to ${MAX_RETENTION_DAYS} (0 keeps the link forever), not null`);
  assert.equal(editRefusal({ tags: null }), 'tags must be an array; [] clears them');
  assert.equal(editRefusal({ url: null }), 'url is required');
});

test('text no store can hold: a NUL or a lone surrogate in the URL, the title or a tag', () => {
  for (const [text, what] of [
    ['\0', 'a NUL character'],
    [LONE_SURROGATE, 'a lone UTF-16 surrogate (it is not Unicode text)'],
  ] as const) {
    assert.equal(editRefusal({ url: `https://example.com/${text}` }), `url must not contain ${what}`);
    assert.equal(editRefusal({ title: `T${text}` }), `title must not contain ${what}`);
    assert.equal(editRefusal({ tags: ['ok', `t${text}`] }), `a tag must not contain ${what}`);
    assert.equal(createRefusal({ url: `https://example.com/${text}` }), `url must not contain ${what}`);
    assert.equal(createRefusal({ url: 'https://example.com/', title: text }), `title must not contain ${what}`);
    assert.equal(createRefusal({ url: 'https://example.com/', tags: [text] }), `a tag must not contain ${what}`);
  }
});

test('the title: at most 512 characters, counted in code points', () => {
  assert.equal(MAX_TITLE_LENGTH, 512);
  assert.deepEqual(edited({ title: EMOJI.repeat(512) }), { title: EMOJI.repeat(512) });
  assert.equal(editRefusal({ title: EMOJI.repeat(513) }), 'title must be at most 512 characters long, not 513');
  assert.deepEqual(edited({ title: 'x'.repeat(512) }), { title: 'x'.repeat(512) });
  assert.equal(editRefusal({ title: 'x'.repeat(513) }), 'title must be at most 512 characters long, not 513');
  assert.equal(createRefusal({ url: 'https://example.com/', title: EMOJI.repeat(513) }), 'title must be at most 512 characters long, not 513');
});

test('the tags: each 1 to 50 characters (code points), at most 20 distinct', () => {
  assert.deepEqual(edited({ tags: [EMOJI.repeat(50)] }), { tags: [EMOJI.repeat(50)] });
  assert.equal(editRefusal({ tags: [EMOJI.repeat(51)] }), 'a tag must be 1 to 50 characters long (after trimming spaces), not 51');
  assert.deepEqual(edited({ tags: twenty }), { tags: twenty });
  assert.equal(editRefusal({ tags: [...twenty, 'u'] }), 'a link may have at most 20 distinct tags, not 21');
  assert.equal(createRefusal({ url: 'https://example.com/', tags: [...twenty, 'u'] }), 'a link may have at most 20 distinct tags, not 21');
});

test('the numbers: retention 0 to 36500 days and a visit limit of 1 to 2147483647, each at and past its limit', () => {
  assert.deepEqual(edited({ retentionDays: MAX_RETENTION_DAYS, maxVisits: MAX_VISITS }), { retentionDays: MAX_RETENTION_DAYS, maxVisits: MAX_VISITS });
  assert.equal(editRefusal({ retentionDays: MAX_RETENTION_DAYS + 1 }), 'retention_days must be an integer from 0 to 36500 (0 keeps the link forever)');
  assert.equal(editRefusal({ maxVisits: MAX_VISITS + 1 }), 'max_visits must be an integer from 1 to 2147483647, or null for no limit');
  assert.equal(editRefusal({ maxVisits: 0 }), 'max_visits must be an integer from 1 to 2147483647, or null for no limit');
});

test('the URL: its length limit at and past it, as sent', () => {
  const exact = `https://example.com/${'a'.repeat(40)}`;
  assert.equal(exact.length, 60);
  assert.deepEqual(edited({ url: exact }), { url: exact });
  assert.equal(editRefusal({ url: `${exact}a` }), 'url is too long: 61 characters, the limit is 60');
});

test('a create: the fields in the order their refusals are told, and a custom code by its rule', () => {
  assert.equal(createRefusal({ url: 'ftp://x.example/', title: '\0' }), 'url must use http or https, not ftp');
  assert.equal(createRefusal({ url: 'https://example.com/', code: 'x'.repeat(13) }), 'code must be 6 to 12 characters long, not 13');
  assert.equal(createRefusal({ url: 'https://example.com/', code: 'static' }), 'code "static" is reserved for the service\'s own paths');
  const checked = checkCreate({ url: 'https://example.com/', code: 'x'.repeat(12), title: 'T', tags: 'b,a', textual: true }, URLS, CODES);
  assert.deepEqual(checked, {
    url: 'https://example.com/',
    retentionDays: 0,
    custom: 'x'.repeat(12),
    maxVisits: null,
    labels: { title: 'T', tags: ['a', 'b'] },
    domain: null,
  });
});
