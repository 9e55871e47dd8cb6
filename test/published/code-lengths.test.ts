/**
 * The document says the code lengths of the instance that serves it: `ShortenInput`'s custom code
 * is null, empty, or `min` to `max` characters of the custom-code alphabet, as numbers a client
 * (the UI's hint) reads before anything is typed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { schemas } from '../../src/published/openapi-parts.ts';
import { SHORTEN_INPUT_SCHEMA } from '../../src/published/schemas.ts';
import { checkCustomCode, Refusal } from '../../src/links/validate.ts';
import { start } from '../support/helpers.ts';

const CODES = [undefined, null, '', 'ab', 'abc', 'a-b_C', 'abcdefghi', 'abcdefghij', 'a b', 'ab!', 'é12', 'x'.repeat(65)];

test("ShortenInput's code takes exactly the codes the service takes (reserved words aside), at the instance's lengths", () => {
  const input = schemas({}, { min: 3, max: 9 })['ShortenInput']!;
  const valid = new Ajv({ strict: false }).compile(input);
  for (const code of CODES) {
    const body = code === undefined ? { url: 'https://e.example/' } : { url: 'https://e.example/', code };
    assert.equal(valid(body), !(checkCustomCode(code, 3, 9) instanceof Refusal), JSON.stringify(code));
  }
  const lengths = ((input['properties'] as Record<string, { anyOf: { minLength?: number; maxLength?: number }[] }>)['code']?.anyOf ?? []).filter(
    (s) => s.minLength !== undefined,
  );
  assert.deepEqual(
    lengths.map((s) => [s.minLength, s.maxLength]),
    [[3, 9]],
  );
});

test('a document of no instance keeps the general schema', () => {
  assert.equal(schemas({})['ShortenInput'], SHORTEN_INPUT_SCHEMA);
});

test("the served document carries the instance's MIN_SHORT_LENGTH and MAX_SHORT_LENGTH", async (t) => {
  const h = await start(t, { minShortLength: 4, maxShortLength: 7 });
  const doc = JSON.parse((await h.req('/openapi.json')).body);
  const branches = doc.components.schemas.ShortenInput.properties.code.anyOf as { minLength?: number; maxLength?: number }[];
  assert.deepEqual(
    branches.filter((s) => s.minLength !== undefined).map((s) => [s.minLength, s.maxLength]),
    [[4, 7]],
  );
});
