/**
 * A list read from a store whose page slices are promises (a database): its JSON is the same, in
 * pieces that are promises, and the pacer writes each once it arrives, in order.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { listJson } from '../../src/api/list-json.ts';
import type { UrlListing, UrlRecord } from '../../src/links/record.ts';
import { createPacer, type Piece, type Sink } from '../../src/http/pacer.ts';
import { NO_ROUTING } from '../support/no-routing.ts';

const record = (i: number): UrlRecord => ({
  short_code: `c${i}`,
  domain: null,
  short_url: `https://s.example/c${i}`,
  original_url: `https://example.com/${i}`,
  created_at: 1_790_000_000 + i,
  visit_count: i,
  untracked_visits: i,
  retention_days: 0,
  max_visits: null,
  expires_at: null,
  title: null,
  tags: [],
  author: null,
  ...NO_ROUTING,
});

function asyncListing(n: number): UrlListing<Promise<UrlRecord[]>> {
  return {
    total: n,
    count: n,
    slice: async (from, to) => Array.from({ length: Math.max(0, Math.min(to, n) - from) }, (_, k) => record(from + k)),
    release: () => undefined,
  };
}

class Collect extends EventEmitter implements Sink {
  destroyed = false;
  ended = false;
  written: string[] = [];
  write(piece: string): boolean {
    this.written.push(piece);
    return true;
  }
  end(): void {
    this.ended = true;
  }
}

test('a page whose slices are promises gives the same JSON, a promise per slice', async () => {
  for (const n of [0, 1, 64, 150]) {
    const pieces = [...listJson(asyncListing(n))];
    assert.equal(pieces.filter((p) => typeof p !== 'string').length, Math.ceil(n / 64), `${n} records`);
    const urls = Array.from({ length: n }, (_, i) => record(i));
    assert.equal((await Promise.all(pieces)).join(''), JSON.stringify({ count: n, urls }), `${n} records`);
  }
});

test('the pacer writes a piece that is a promise once it arrives, in order, then ends', async () => {
  const sink = new Collect();
  const later = (s: string, ms: number): Promise<string> => new Promise((resolve) => setTimeout(() => resolve(s), ms));
  const pieces: Piece[] = ['a', later('b', 20), 'c', later('d', 5), 'e'];
  await createPacer()(sink, pieces[Symbol.iterator]());
  assert.deepEqual(sink.written, ['a', 'b', 'c', 'd', 'e']);
  assert.equal(sink.ended, true);
  await createPacer()(new Collect(), [...listJson(asyncListing(130))][Symbol.iterator]());
});

test('a piece that fails to arrive rejects the stream, and nothing after it is written', async () => {
  const sink = new Collect();
  function* pieces(): Generator<Piece> {
    yield 'a';
    yield Promise.reject(new Error('database down'));
    yield 'c';
  }
  await assert.rejects(createPacer()(sink, pieces()), /database down/);
  assert.deepEqual(sink.written, ['a']);
  assert.equal(sink.ended, false);
});
