/**
 * Regression: listing 100k links held the event loop for 151–282 ms. When the kernel took each
 * write at once, Node emitted `drain` from `process.nextTick`, and "write, await drain" went from
 * microtask to microtask without the loop ever running in between; and a page of up to 1,000
 * records was built in one go, whatever the size of its URLs. Long answers now go through the
 * pacer (bounded work per turn, a later turn after every drain) in pieces bounded by size.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { createPacer, type Sink } from '../../src/http/pacer.ts';
import { createResponder } from '../../src/http/respond.ts';
import { LIST_PIECE_CHARS, listJson } from '../../src/api/list-json.ts';
import type { UrlListing, UrlRecord } from '../../src/links/record.ts';
import { encodeEntry } from '../../src/store/log/format.ts';
import { start, tempDir } from '../support/helpers.ts';
import { onOneProcess } from '../support/cluster.ts';
import { NO_ROUTING } from '../support/no-routing.ts';

/** Counts event-loop turns: a setImmediate callback that schedules itself, until the test ends. */
function turnCounter(t: TestContext): () => number {
  let turn = 0;
  let timer = setImmediate(function tick() {
    turn++;
    timer = setImmediate(tick);
  });
  t.after(() => clearImmediate(timer));
  return () => turn;
}

/** Order of writes across every fake response. */
let writeOrder = 0;

/** A response whose socket takes every write at once: `write` says "wait", `drain` follows on nextTick. */
class DrainsAtOnce extends EventEmitter implements Sink {
  destroyed = false;
  ended = false;
  readonly writes: { piece: string; turn: number; order: number }[] = [];
  constructor(private readonly turn: () => number) {
    super();
  }
  writeHead(): this {
    return this;
  }
  write(piece: string): boolean {
    this.writes.push({ piece, turn: this.turn(), order: writeOrder++ });
    process.nextTick(() => this.emit('drain'));
    return false;
  }
  end(): void {
    this.ended = true;
  }
}

/** A response that never asks to wait (small writes into an empty socket buffer). */
class TakesAll extends DrainsAtOnce {
  override write(piece: string): boolean {
    super.write(piece);
    this.removeAllListeners('drain');
    return true;
  }
}

test('a stream whose socket drains at once still lets the event loop run between every two pieces', async (t) => {
  const turn = turnCounter(t);
  const sink = new DrainsAtOnce(turn);
  const pieces = ['{"a":', '1', ',"b":', '2', '}'];
  await createResponder([]).stream(sink as unknown as ServerResponse, 200, 'application/json', pieces);
  assert.deepEqual(
    sink.writes.map((w) => w.piece),
    pieces,
  );
  assert.equal(sink.ended, true);
  for (let i = 1; i < sink.writes.length; i++) {
    assert.ok(sink.writes[i]!.turn > sink.writes[i - 1]!.turn, `piece ${i} was written in the same turn as piece ${i - 1}`);
  }
});

/** Pieces that each cost `cost` ms of the fake clock to build. */
function* costly(clock: { now: number }, name: string, n: number, cost: number): Generator<string> {
  for (let i = 0; i < n; i++) {
    clock.now += cost;
    yield `${name}${i}`;
  }
}

/** The pieces written, grouped by the turn they were written in. */
function byTurn(writes: readonly { piece: string; turn: number }[]): string[][] {
  const groups = new Map<number, string[]>();
  for (const w of writes) groups.set(w.turn, [...(groups.get(w.turn) ?? []), w.piece]);
  return [...groups.values()];
}

test('the pacer stops for the turn once its budget is spent, even when the socket never asks to wait', async (t) => {
  const turn = turnCounter(t);
  const clock = { now: 0 };
  const pace = createPacer({ budgetMs: 10, now: () => clock.now });
  const sink = new TakesAll(turn);
  await pace(sink, costly(clock, 'p', 10, 4));
  // 4 ms a piece against 10 ms a turn: the third piece crosses the budget, and the turn ends there.
  assert.deepEqual(byTurn(sink.writes), [['p0', 'p1', 'p2'], ['p3', 'p4', 'p5'], ['p6', 'p7', 'p8'], ['p9']]);
  assert.equal(sink.ended, true);
});

test('answers written at the same time share one budget per turn, one piece each in turn', async (t) => {
  const turn = turnCounter(t);
  const clock = { now: 0 };
  const pace = createPacer({ budgetMs: 10, now: () => clock.now });
  const sinks = ['a', 'b', 'c'].map(() => new TakesAll(turn));
  await Promise.all(sinks.map((sink, i) => pace(sink, costly(clock, 'abc'[i]!, 3, 4))));
  const all = sinks.flatMap((s) => s.writes).sort((x, y) => x.order - y.order);
  // 4 ms a piece, 10 ms a turn for all three together; within a turn, one piece of each in turn.
  assert.deepEqual(byTurn(all), [
    ['a0', 'b0', 'c0'],
    ['a1', 'b1', 'c1'],
    ['a2', 'b2', 'c2'],
  ]);
});

test('a client that goes away ends the stream: nothing more is built or written', async (t) => {
  const turn = turnCounter(t);
  let built = 0;
  function* pieces(): Generator<string> {
    for (;;) {
      built++;
      yield 'x';
    }
  }
  // Gone while waiting for drain: `close` comes instead.
  const gone = new (class extends DrainsAtOnce {
    override write(piece: string): boolean {
      this.writes.push({ piece, turn: turn(), order: writeOrder++ });
      if (this.writes.length === 2) {
        this.destroyed = true;
        process.nextTick(() => this.emit('close'));
      } else process.nextTick(() => this.emit('drain'));
      return false;
    }
  })(turn);
  await createPacer()(gone, pieces());
  assert.equal(gone.writes.length, 2);
  assert.equal(built, 2);
  assert.equal(gone.ended, false);
  assert.equal(gone.listenerCount('drain') + gone.listenerCount('close'), 0, 'no listener left behind');
});

test('a piece that fails to build rejects the stream', async (t) => {
  const sink = new TakesAll(turnCounter(t));
  function* broken(): Generator<string> {
    yield 'ok';
    throw new Error('boom');
  }
  await assert.rejects(createPacer()(sink, broken()), /boom/);
  assert.deepEqual(
    sink.writes.map((w) => w.piece),
    ['ok'],
  );
});

/** A listing of `n` records whose URLs are `urlChars` long. */
function listing(n: number, urlChars: number): UrlListing {
  const record = (i: number): UrlRecord => ({
    short_code: `c${i}`,
    domain: null,
    short_url: `https://s.example/c${i}`,
    original_url: `https://example.com/${'u'.repeat(urlChars)}/${i}`,
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
  return {
    total: n,
    count: n,
    slice: (from, to) => Array.from({ length: Math.max(0, Math.min(to, n) - from) }, (_, k) => record(from + k)),
    release: () => undefined,
  };
}

test('list pieces are bounded by size, not by a number of records, and together are JSON.stringify of the list', () => {
  const page = listing(300, 8_000);
  const pieces = [...listJson(page)];
  const recordChars = JSON.stringify(page.slice(0, 1)[0]).length + 1;
  assert.ok(pieces.length > 30, `${pieces.length} pieces`);
  for (const p of pieces) assert.ok(p.length <= LIST_PIECE_CHARS + recordChars, `a piece of ${p.length} characters`);
  assert.equal(pieces.join(''), JSON.stringify({ count: 300, urls: page.slice(0, 300) }));
  assert.deepEqual([...listJson(listing(0, 10))], ['{"count":0,"urls":[]}']);
  assert.deepEqual([...listJson(listing(2, 10), 1)].length, 3, 'a piece per record at the smallest size, then the end');
});

test(
  'a page of a few hundred long URLs is streamed; a page that fits in one piece goes out whole',
  onOneProcess('it seeds its log file directly'),
  async (t) => {
    const dir = tempDir();
    const lines: Buffer[] = [];
    for (let i = 0; i < 200; i++) {
      lines.push(
        encodeEntry({
          op: 'C',
          code: `k${i}`,
          url: `https://example.com/${'x'.repeat(8_000)}/${i}`,
          createdAt: 1_790_000_000 + i,
          retentionDays: 0,
          visits: 0,
        }),
      );
    }
    writeFileSync(join(dir, 'urls.log'), Buffer.concat(lines));
    const h = await start(t, { dataDir: dir, apiKeys: ['k'] });
    const long = await h.req('/api/urls', { headers: { 'x-api-key': 'k' } });
    assert.equal(long.status, 200);
    assert.equal(long.headers['transfer-encoding'], 'chunked', '1.6 MB of JSON is not built in one turn');
    assert.equal(long.headers['content-length'], undefined);
    const parsed = JSON.parse(long.body) as { count: number };
    assert.equal(parsed.count, 200);
    assert.equal(long.body, JSON.stringify(parsed));
    const short = await h.req('/api/urls?limit=5', { headers: { 'x-api-key': 'k' } });
    assert.equal(short.headers['content-length'], String(Buffer.byteLength(short.body)));
    assert.equal((JSON.parse(short.body) as { count: number }).count, 5);
  },
);
