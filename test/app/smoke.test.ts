import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start } from '../support/helpers.ts';

test('shorten, redirect and read back one link', async (t) => {
  const h = await start(t);
  const code = await h.shorten('https://example.com/page');
  const r = await h.req(`/${code}`);
  assert.equal(r.status, 302);
  assert.equal(r.headers.location, 'https://example.com/page');
  const meta = await h.req(`/api/urls/${code}`);
  assert.equal(JSON.parse(meta.body).visit_count, 1);
});
