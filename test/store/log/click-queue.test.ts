/**
 * `click-queue.ts`: a subscription's never-attempted `link.clicked` rows in columns read back as
 * the rows pushed, through growth, a front cut, a removal in the middle and an emptying (which
 * forgets the strings); `find` is a search by seq.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClickQueue } from '../../../src/store/log/click-queue.ts';
import { ClickRow } from '../../../src/store/log/click-row.ts';
import { newEventId } from '../../../src/store/webhook-store.ts';

const row = (seq: number): ClickRow =>
  ClickRow.of(
    seq,
    'wh_ALLALLALLALLALL0',
    0,
    1_000 + seq,
    newEventId(1_790_000_000_000 + (seq % 3)),
    seq % 2 === 0 ? `go.example/c${seq % 7}` : `c${seq % 5}`,
    1_790_000_000 + seq,
    seq % 4 === 0 ? null : `r${seq % 3}.example`,
    (seq * 2654435761) >>> 0,
  );

const view = (r: ClickRow) => [r.seq, r.subscription, r.attempts, r.nextAt, r.id, r.key, r.time, r.referrer, r.attrs, r.type, r.data];

test('rows read back as pushed, through growth, cuts at the front and a removal in the middle', () => {
  const q = new ClickQueue('wh_ALLALLALLALLALL0');
  const kept: ClickRow[] = [];
  let seq = 1;
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < 700; i++) {
      const r = row(seq);
      seq += 1 + (seq % 3);
      q.push(r);
      kept.push(r);
    }
    // Settled from the head: the room before the rows is reused rather than grown.
    for (let i = 0; i < 500; i++) {
      q.remove(0);
      kept.shift();
    }
  }
  assert.equal(q.size, kept.length);
  assert.deepEqual(q.rows().map(view), kept.map(view));
  assert.equal(q.headSeq, kept[0]!.seq);
  assert.equal(q.lastSeq, kept.at(-1)!.seq);
  const middle = kept[321]!;
  assert.equal(q.find(middle.seq), 321);
  assert.equal(q.find(middle.seq + 0.5), -1);
  assert.equal(q.find(kept.at(-1)!.seq + 1), -1);
  q.remove(321);
  kept.splice(321, 1);
  assert.deepEqual(q.rows().map(view), kept.map(view));
  assert.equal(q.find(middle.seq), -1);
});

test('emptied, it forgets its strings and starts again', () => {
  const q = new ClickQueue('wh_ALLALLALLALLALL0');
  for (let s = 1; s <= 3; s++) q.push(row(s));
  for (let i = 0; i < 3; i++) q.remove(0);
  assert.equal(q.size, 0);
  assert.equal(q.headSeq, Number.POSITIVE_INFINITY);
  assert.equal(q.lastSeq, Number.NEGATIVE_INFINITY);
  assert.equal((q as unknown as { strings: string[] }).strings.length, 0);
  const again = row(10);
  q.push(again);
  assert.deepEqual(view(q.row(0)), view(again));
});

test("a row's body shows the event's fields, never the visitor id or the rule", () => {
  const r = ClickRow.of(1, 'wh_X', 0, 0, 'msg_1', 'go.example/abc', 5, 'news.example', 0xffffffff);
  const data = JSON.parse(r.data) as { short_code: string; domain: string | null; visit: Record<string, unknown> };
  assert.equal(data.short_code, 'abc');
  assert.equal(data.domain, 'go.example');
  assert.deepEqual(Object.keys(data.visit), ['time', 'referrer', 'country', 'browser', 'os', 'device', 'bot']);
  assert.equal(r.attrs & ~0xfffff, 0, 'the visitor and rule bits are dropped');
});
